locals {
  service_dimension = { service = var.service_dimension }
  lambda_dimension  = { FunctionName = var.lambda_function_name }

  # The alarms on one metric each, by purpose; they differ only in these fields, so one resource block makes them
  # all. Every one is "notBreaching" on missing data and notifies alarm_actions / ok_actions.
  metric_alarms = {
    # Consumer lag, from the index-service gauge tierlog_group_total_lag (exported by the collector): the largest
    # total lag of any group.
    consumer_lag = {
      suffix      = "consumer-lag"
      description = "A consumer group is more than ${var.consumer_lag_threshold} records behind."
      namespace   = var.metrics_namespace
      metric      = "tierlog_group_total_lag"
      dimensions  = local.service_dimension
      statistic   = "Maximum"
      periods     = var.evaluation_periods
      operator    = "GreaterThanThreshold"
      threshold   = var.consumer_lag_threshold
    }
    # Consumer lag in time, from tierlog_group_lag_seconds (the age of the first unconsumed record of each
    # partition of each group): the worst partition of any group. Says "minutes behind" where a count cannot.
    consumer_lag_seconds = {
      suffix      = "consumer-lag-seconds"
      description = "A consumer group is more than ${var.consumer_lag_seconds_threshold} s behind on some partition."
      namespace   = var.metrics_namespace
      metric      = "tierlog_group_lag_seconds"
      dimensions  = local.service_dimension
      statistic   = "Maximum"
      periods     = var.evaluation_periods
      operator    = "GreaterThanThreshold"
      threshold   = var.consumer_lag_seconds_threshold
    }
    # Tiering backlog: sealed segments not yet uploaded. Growth means the hot volume fills up.
    tiering_backlog = {
      suffix      = "tiering-backlog"
      description = "More than ${var.tiering_backlog_threshold} sealed segments wait for upload to S3."
      namespace   = var.metrics_namespace
      metric      = "tierlog_tiering_pending_segments"
      dimensions  = local.service_dimension
      statistic   = "Maximum"
      periods     = var.evaluation_periods
      operator    = "GreaterThanThreshold"
      threshold   = var.tiering_backlog_threshold
    }
    tiering_upload_errors = {
      suffix      = "tiering-upload-errors"
      description = "Segment uploads to S3 are failing."
      namespace   = var.metrics_namespace
      metric      = "tierlog_tiering_upload_errors_total"
      dimensions  = local.service_dimension
      statistic   = "Sum"
      periods     = var.evaluation_periods
      operator    = "GreaterThanThreshold"
      threshold   = 0
    }
    # Cold compaction: a compacted topic's cold tier whose pass keeps failing (a corrupt object, S3 errors) grows
    # without bound and keeps serving superseded records. Passes retry on their own; a failure in every period is
    # the case for a person.
    cold_compaction_failures = {
      suffix      = "cold-compaction-failures"
      description = "Cold compaction passes are failing (see the index-service log for 'cold compaction failed')."
      namespace   = var.metrics_namespace
      metric      = "tierlog_cold_compaction_failures_total"
      dimensions  = local.service_dimension
      statistic   = "Sum"
      periods     = var.evaluation_periods
      operator    = "GreaterThanThreshold"
      threshold   = 0
    }
    # Backpressure: produce answers 503 hot-tier-full (hot volume over tierlog.hot.max-used-ratio, upload backlog
    # over tierlog.tiering.max-pending-bytes, or out of space). From the gauge tierlog_hot_tier_full (1 while
    # refusing).
    hot_tier_full = {
      suffix      = "hot-tier-full"
      description = "Produce is refused with 503 hot-tier-full: free the hot volume or fix tiering (see /q/health/ready, check tierlog-hot-tier)."
      namespace   = var.metrics_namespace
      metric      = "tierlog_hot_tier_full"
      dimensions  = local.service_dimension
      statistic   = "Maximum"
      periods     = var.hot_tier_full_evaluation_periods
      operator    = "GreaterThanThreshold"
      threshold   = 0
    }
    lambda_errors = {
      suffix      = "ingest-errors"
      description = "The ingest function reports invocation errors."
      namespace   = "AWS/Lambda"
      metric      = "Errors"
      dimensions  = local.lambda_dimension
      statistic   = "Sum"
      periods     = var.evaluation_periods
      operator    = "GreaterThanOrEqualToThreshold"
      threshold   = var.lambda_errors_threshold
    }
    lambda_throttles = {
      suffix      = "ingest-throttles"
      description = "The ingest function is throttled (reserved concurrency or account limit reached)."
      namespace   = "AWS/Lambda"
      metric      = "Throttles"
      dimensions  = local.lambda_dimension
      statistic   = "Sum"
      periods     = var.evaluation_periods
      operator    = "GreaterThanOrEqualToThreshold"
      threshold   = var.lambda_throttles_threshold
    }
  }
}

resource "aws_cloudwatch_metric_alarm" "metric" {
  for_each = local.metric_alarms

  alarm_name          = "${var.name}-${each.value.suffix}"
  alarm_description   = each.value.description
  namespace           = each.value.namespace
  metric_name         = each.value.metric
  dimensions          = each.value.dimensions
  statistic           = each.value.statistic
  period              = var.period
  evaluation_periods  = each.value.periods
  comparison_operator = each.value.operator
  threshold           = each.value.threshold
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.ok_actions
  tags                = var.tags
}

# The alarms were one resource block each before; these keep a deployed stack's alarms (no destroy and re-create).
moved {
  from = aws_cloudwatch_metric_alarm.consumer_lag
  to   = aws_cloudwatch_metric_alarm.metric["consumer_lag"]
}

moved {
  from = aws_cloudwatch_metric_alarm.consumer_lag_seconds
  to   = aws_cloudwatch_metric_alarm.metric["consumer_lag_seconds"]
}

moved {
  from = aws_cloudwatch_metric_alarm.tiering_backlog
  to   = aws_cloudwatch_metric_alarm.metric["tiering_backlog"]
}

moved {
  from = aws_cloudwatch_metric_alarm.tiering_upload_errors
  to   = aws_cloudwatch_metric_alarm.metric["tiering_upload_errors"]
}

moved {
  from = aws_cloudwatch_metric_alarm.hot_tier_full
  to   = aws_cloudwatch_metric_alarm.metric["hot_tier_full"]
}

moved {
  from = aws_cloudwatch_metric_alarm.lambda_errors
  to   = aws_cloudwatch_metric_alarm.metric["lambda_errors"]
}

moved {
  from = aws_cloudwatch_metric_alarm.lambda_throttles
  to   = aws_cloudwatch_metric_alarm.metric["lambda_throttles"]
}

# 5xx rate of the HTTP API in percent of requests.
resource "aws_cloudwatch_metric_alarm" "api_5xx_rate" {
  alarm_name          = "${var.name}-api-5xx-rate"
  alarm_description   = "More than ${var.api_5xx_rate_threshold_percent}% of API requests answer 5xx."
  evaluation_periods  = var.evaluation_periods
  comparison_operator = "GreaterThanThreshold"
  threshold           = var.api_5xx_rate_threshold_percent
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.ok_actions
  tags                = var.tags

  metric_query {
    id          = "rate"
    expression  = "IF(requests > 0, 100 * errors / requests, 0)"
    label       = "5xx rate (%)"
    return_data = true
  }

  metric_query {
    id = "errors"

    metric {
      namespace   = "AWS/ApiGateway"
      metric_name = "5xx"
      dimensions  = { ApiId = var.api_id, Stage = var.api_stage }
      stat        = "Sum"
      period      = var.period
    }
  }

  metric_query {
    id = "requests"

    metric {
      namespace   = "AWS/ApiGateway"
      metric_name = "Count"
      dimensions  = { ApiId = var.api_id, Stage = var.api_stage }
      stat        = "Sum"
      period      = var.period
    }
  }
}
