variable "region" {
  description = "AWS region to deploy to."
  type        = string
  default     = "eu-west-1"
}

variable "name" {
  description = "Name prefix of every resource."
  type        = string
  default     = "tierlog"
}

variable "bucket_name" {
  description = "Name of the cold-tier bucket (globally unique)."
  type        = string
}

variable "cold_prefix" {
  description = "Key prefix of Tierlog's objects in the bucket (TIERLOG_COLD_S3_PREFIX)."
  type        = string
  default     = "tierlog"
}

variable "kms_key_arn" {
  description = "KMS key for the bucket (SSE-KMS); null for SSE-S3."
  type        = string
  default     = null
}

variable "force_destroy" {
  description = "Allow destroying a non-empty bucket (test stacks only)."
  type        = bool
  default     = false
}

variable "index_service_image" {
  description = "Image of the index-service, pushed to a registry the task can pull from (e.g. ECR)."
  type        = string
}

variable "otel_collector_image" {
  description = "Image of the ADOT collector sidecar."
  type        = string
  default     = "public.ecr.aws/aws-observability/aws-otel-collector:v0.40.0"
}

variable "metrics_namespace" {
  description = "CloudWatch namespace of the index-service metrics."
  type        = string
  default     = "Tierlog"
}

variable "fsync" {
  description = "TIERLOG_FSYNC of both the function and the service."
  type        = string
  default     = "always"
}

variable "lambda_memory_size" {
  description = "Memory of the ingest function in MB."
  type        = number
  default     = 1024
}

variable "lambda_timeout" {
  description = "Timeout of the ingest function in seconds."
  type        = number
  default     = 15
}

variable "lambda_reserved_concurrency" {
  description = "Reserved concurrency of the ingest function (-1 = unreserved)."
  type        = number
  default     = 50
}

variable "authorization_type" {
  description = "Authorization of the API routes: JWT (default), AWS_IAM or NONE. The services check tokens either way."
  type        = string
  default     = "JWT"
}

variable "jwt_issuer" {
  description = "JWT issuer URL when authorization_type = JWT."
  type        = string
  default     = null
}

variable "jwt_audience" {
  description = "JWT audiences when authorization_type = JWT."
  type        = list(string)
  default     = []
}

variable "consumer_lag_threshold" {
  description = "Total lag of the worst consumer group that raises the alarm."
  type        = number
  default     = 100000
}

variable "alarm_actions" {
  description = "ARNs (e.g. an SNS topic) notified by the alarms."
  type        = list(string)
  default     = []
}

variable "tags" {
  description = "Default tags of every resource."
  type        = map(string)
  default     = { Project = "tierlog" }
}

variable "kafka_enabled" {
  description = "Open the index-service's Kafka listener, with an internal Network Load Balancer for bootstrap (output kafka_bootstrap_servers)."
  type        = bool
  default     = false
}

variable "kafka_port" {
  description = "Kafka port of the tasks and of the load balancer."
  type        = number
  default     = 9092
}

variable "kafka_client_cidr_blocks" {
  description = "IPv4 CIDRs allowed to reach the Kafka port (e.g. the VPC's, 10.0.0.0/16). With kafka_enabled, this or kafka_client_security_group_ids must name someone."
  type        = list(string)
  default     = []
}

variable "kafka_client_security_group_ids" {
  description = "Security groups allowed to reach the Kafka port."
  type        = list(string)
  default     = []
}

variable "kafka_tls_keystore_secret_arn" {
  description = "Secrets Manager secret holding the base64 of the Kafka listener's PKCS12 keystore (modules/index-service/README.md, \"Kafka over TLS\"); null: no TLS."
  type        = string
  default     = null
}

variable "kafka_tls_keystore_password_secret_arn" {
  description = "Secrets Manager secret holding the keystore's password."
  type        = string
  default     = null
}

variable "kafka_allow_plaintext" {
  description = "Allow the Kafka listener without TLS (SASL tokens in plaintext inside the VPC). Test stacks only."
  type        = bool
  default     = false
}

variable "kafka_client_auth" {
  description = "Client certificates on the Kafka listener: none, requested or required (modules/index-service/README.md, \"Client certificates\"). Other than none it needs kafka_enabled, the TLS keystore and kafka_client_ca_pem."
  type        = string
  default     = "none"
}

variable "kafka_client_ca_pem" {
  description = "PEM text of the CA certificate(s) that sign Kafka client certificates; null: none."
  type        = string
  default     = null
}

variable "kafka_client_certificate_scopes" {
  description = "Client certificate subject (distinguished name, e.g. CN=orders-app,O=Acme) to its space-separated Tierlog scopes; needs kafka_client_auth other than none."
  type        = map(string)
  default     = {}
}
