variable "name" {
  description = "Prefix of the alarm names."
  type        = string
}

variable "metrics_namespace" {
  description = "CloudWatch namespace of the index-service metrics (index-service module output)."
  type        = string
  default     = "Tierlog"
}

variable "service_dimension" {
  description = "Value of the `service` dimension of those metrics (index-service module output)."
  type        = string
}

variable "lambda_function_name" {
  description = "Name of the ingest function."
  type        = string
}

variable "api_id" {
  description = "ID of the HTTP API."
  type        = string
}

variable "api_stage" {
  description = "Stage of the HTTP API."
  type        = string
  default     = "$default"
}

variable "period" {
  description = "Period of every alarm in seconds (at least the collector's scrape interval)."
  type        = number
  default     = 60
}

variable "evaluation_periods" {
  description = "Consecutive breaching periods before an alarm fires."
  type        = number
  default     = 5
}

variable "consumer_lag_threshold" {
  description = "Total lag (records) of the worst consumer group that raises the consumer-lag alarm."
  type        = number
  default     = 100000
}

variable "consumer_lag_seconds_threshold" {
  description = "Seconds behind (age of the first unconsumed record) of the worst group partition that raise the consumer-lag-seconds alarm."
  type        = number
  default     = 300
}

variable "tiering_backlog_threshold" {
  description = "Sealed segments waiting for upload that raise the tiering-backlog alarm."
  type        = number
  default     = 20
}

variable "api_5xx_rate_threshold_percent" {
  description = "Percentage of 5xx answers of the API that raises the 5xx alarm."
  type        = number
  default     = 1
}

variable "lambda_errors_threshold" {
  description = "Errors of the ingest function per period that raise its error alarm."
  type        = number
  default     = 1
}

variable "lambda_throttles_threshold" {
  description = "Throttles of the ingest function per period that raise its throttle alarm."
  type        = number
  default     = 1
}

variable "alarm_actions" {
  description = "ARNs (e.g. SNS topics) notified when an alarm fires."
  type        = list(string)
  default     = []
}

variable "ok_actions" {
  description = "ARNs notified when an alarm returns to OK."
  type        = list(string)
  default     = []
}

variable "tags" {
  description = "Tags for every resource of the module."
  type        = map(string)
  default     = {}
}

variable "hot_tier_full_evaluation_periods" {
  description = "Consecutive periods in which produce was refused with 503 hot-tier-full before the hot-tier-full alarm fires."
  type        = number
  default     = 1
}
