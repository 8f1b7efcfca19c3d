output "alarm_arns" {
  description = "ARNs of the alarms, by purpose."
  value = merge(
    { for purpose, alarm in aws_cloudwatch_metric_alarm.metric : purpose => alarm.arn },
    { api_5xx_rate = aws_cloudwatch_metric_alarm.api_5xx_rate.arn },
  )
}
