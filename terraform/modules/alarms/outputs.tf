output "alarm_arns" {
  description = "ARNs of the alarms, by purpose."
  value = {
    consumer_lag          = aws_cloudwatch_metric_alarm.consumer_lag.arn
    consumer_lag_seconds  = aws_cloudwatch_metric_alarm.consumer_lag_seconds.arn
    tiering_backlog       = aws_cloudwatch_metric_alarm.tiering_backlog.arn
    tiering_upload_errors = aws_cloudwatch_metric_alarm.tiering_upload_errors.arn
    hot_tier_full         = aws_cloudwatch_metric_alarm.hot_tier_full.arn
    api_5xx_rate          = aws_cloudwatch_metric_alarm.api_5xx_rate.arn
    lambda_errors         = aws_cloudwatch_metric_alarm.lambda_errors.arn
    lambda_throttles      = aws_cloudwatch_metric_alarm.lambda_throttles.arn
  }
}
