locals {
  service_dimension = { service = var.service_dimension }
}

# Consumer lag, from the index-service gauge tierlog_group_total_lag (exported by the collector):
# the largest total lag of any group.
resource "aws_cloudwatch_metric_alarm" "consumer_lag" {
  alarm_name          = "${var.name}-consumer-lag"
  alarm_description   = "A consumer group is more than ${var.consumer_lag_threshold} records behind."
  namespace           = var.metrics_namespace
  metric_name         = "tierlog_group_total_lag"
  dimensions          = local.service_dimension
  statistic           = "Maximum"
  period              = var.period
  evaluation_periods  = var.evaluation_periods
  comparison_operator = "GreaterThanThreshold"
  threshold           = var.consumer_lag_threshold
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.ok_actions
  tags                = var.tags
}

# Consumer lag in time, from tierlog_group_lag_seconds (the age of the first unconsumed record of each partition of
# each group): the worst partition of any group. Says "minutes behind" where the record count cannot.
resource "aws_cloudwatch_metric_alarm" "consumer_lag_seconds" {
  alarm_name          = "${var.name}-consumer-lag-seconds"
  alarm_description   = "A consumer group is more than ${var.consumer_lag_seconds_threshold} s behind on some partition."
  namespace           = var.metrics_namespace
  metric_name         = "tierlog_group_lag_seconds"
  dimensions          = local.service_dimension
  statistic           = "Maximum"
  period              = var.period
  evaluation_periods  = var.evaluation_periods
  comparison_operator = "GreaterThanThreshold"
  threshold           = var.consumer_lag_seconds_threshold
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.ok_actions
  tags                = var.tags
}

# Tiering backlog: sealed segments not yet uploaded. Growth means the hot volume fills up.
resource "aws_cloudwatch_metric_alarm" "tiering_backlog" {
  alarm_name          = "${var.name}-tiering-backlog"
  alarm_description   = "More than ${var.tiering_backlog_threshold} sealed segments wait for upload to S3."
  namespace           = var.metrics_namespace
  metric_name         = "tierlog_tiering_pending_segments"
  dimensions          = local.service_dimension
  statistic           = "Maximum"
  period              = var.period
  evaluation_periods  = var.evaluation_periods
  comparison_operator = "GreaterThanThreshold"
  threshold           = var.tiering_backlog_threshold
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.ok_actions
  tags                = var.tags
}

resource "aws_cloudwatch_metric_alarm" "tiering_upload_errors" {
  alarm_name          = "${var.name}-tiering-upload-errors"
  alarm_description   = "Segment uploads to S3 are failing."
  namespace           = var.metrics_namespace
  metric_name         = "tierlog_tiering_upload_errors_total"
  dimensions          = local.service_dimension
  statistic           = "Sum"
  period              = var.period
  evaluation_periods  = var.evaluation_periods
  comparison_operator = "GreaterThanThreshold"
  threshold           = 0
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.ok_actions
  tags                = var.tags
}

# Backpressure: produce answers 503 hot-tier-full (hot volume over tierlog.hot.max-used-ratio, upload backlog over
# tierlog.tiering.max-pending-bytes, or out of space). From the gauge tierlog_hot_tier_full (1 while refusing).
resource "aws_cloudwatch_metric_alarm" "hot_tier_full" {
  alarm_name          = "${var.name}-hot-tier-full"
  alarm_description   = "Produce is refused with 503 hot-tier-full: free the hot volume or fix tiering (see /q/health/ready, check tierlog-hot-tier)."
  namespace           = var.metrics_namespace
  metric_name         = "tierlog_hot_tier_full"
  dimensions          = local.service_dimension
  statistic           = "Maximum"
  period              = var.period
  evaluation_periods  = var.hot_tier_full_evaluation_periods
  comparison_operator = "GreaterThanThreshold"
  threshold           = 0
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.ok_actions
  tags                = var.tags
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

resource "aws_cloudwatch_metric_alarm" "lambda_errors" {
  alarm_name          = "${var.name}-ingest-errors"
  alarm_description   = "The ingest function reports invocation errors."
  namespace           = "AWS/Lambda"
  metric_name         = "Errors"
  dimensions          = { FunctionName = var.lambda_function_name }
  statistic           = "Sum"
  period              = var.period
  evaluation_periods  = var.evaluation_periods
  comparison_operator = "GreaterThanOrEqualToThreshold"
  threshold           = var.lambda_errors_threshold
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.ok_actions
  tags                = var.tags
}

resource "aws_cloudwatch_metric_alarm" "lambda_throttles" {
  alarm_name          = "${var.name}-ingest-throttles"
  alarm_description   = "The ingest function is throttled (reserved concurrency or account limit reached)."
  namespace           = "AWS/Lambda"
  metric_name         = "Throttles"
  dimensions          = { FunctionName = var.lambda_function_name }
  statistic           = "Sum"
  period              = var.period
  evaluation_periods  = var.evaluation_periods
  comparison_operator = "GreaterThanOrEqualToThreshold"
  threshold           = var.lambda_throttles_threshold
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
  ok_actions          = var.ok_actions
  tags                = var.tags
}
