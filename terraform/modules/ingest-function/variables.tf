variable "name" {
  description = "Function name; also names its role, security group and log group."
  type        = string
}

variable "artifact_path" {
  description = "Path of the shaded jar built by `mvn package` in ingest-function (ingest-function/target/tierlog-ingest-function.jar)."
  type        = string
}

variable "alias_name" {
  description = "Alias that API Gateway invokes; it follows the latest published version."
  type        = string
  default     = "live"
}

variable "memory_size" {
  description = "Memory of the function in MB (CPU scales with it)."
  type        = number
  default     = 1024
}

variable "timeout" {
  description = "Timeout of one invocation in seconds. Keep it below API Gateway's 30 s integration timeout."
  type        = number
  default     = 15

  validation {
    condition     = var.timeout >= 1 && var.timeout <= 29
    error_message = "timeout must be between 1 and 29 seconds (API Gateway HTTP APIs time out at 30 s)."
  }
}

variable "reserved_concurrent_executions" {
  description = "Reserved concurrency: caps how many instances append to the shared volume at once. -1 = unreserved."
  type        = number
  default     = 50
}

variable "snap_start" {
  description = "Enable SnapStart on published versions. AWS does not support SnapStart together with EFS, so a plan with true fails its precondition; kept so that the choice is explicit."
  type        = bool
  default     = false
}

variable "vpc_id" {
  description = "VPC of the function's network interfaces."
  type        = string
}

variable "vpc_cidr_block" {
  description = "CIDR of the VPC; NFS egress is allowed only into it."
  type        = string
}

variable "subnet_ids" {
  description = "Private subnets of the function's network interfaces (where the EFS mount targets are)."
  type        = list(string)
}

variable "efs_file_system_arn" {
  description = "ARN of the hot-volume file system (IAM condition target)."
  type        = string
}

variable "efs_access_point_arn" {
  description = "ARN of the hot-volume access point the function mounts."
  type        = string
}

variable "mount_path" {
  description = "Where the hot volume is mounted (TIERLOG_DATA_DIR); Lambda requires a path under /mnt/."
  type        = string
  default     = "/mnt/tierlog"

  validation {
    condition     = startswith(var.mount_path, "/mnt/")
    error_message = "Lambda mounts EFS only under /mnt/."
  }
}

variable "fsync" {
  description = "TIERLOG_FSYNC: always, interval or never."
  type        = string
  default     = "always"

  validation {
    condition     = contains(["always", "interval", "never"], var.fsync)
    error_message = "fsync must be always, interval or never."
  }
}

variable "cold_bucket_name" {
  description = "TIERLOG_COLD_S3_BUCKET, passed for configuration parity; the function has no S3 permission."
  type        = string
}

variable "cold_prefix" {
  description = "TIERLOG_COLD_S3_PREFIX."
  type        = string
  default     = ""
}

variable "max_request_bytes" {
  description = "TIERLOG_MAX_REQUEST_BYTES: largest produce body accepted (API Gateway's own limit is 10 MB)."
  type        = number
  default     = 8388608
}

variable "java_tool_options" {
  description = "JAVA_TOOL_OPTIONS of the function (tiered compilation level 1 shortens cold starts)."
  type        = string
  default     = "-XX:+TieredCompilation -XX:TieredStopAtLevel=1"
}

variable "log_retention_days" {
  description = "Retention of the function's log group in days."
  type        = number
  default     = 30
}

variable "tags" {
  description = "Tags for every resource of the module."
  type        = map(string)
  default     = {}
}

variable "producer_id_expiration_ms" {
  description = "TIERLOG_PRODUCER_ID_EXPIRATION_MS: how long an idempotent producer is remembered after its last request (Kafka's producer.id.expiration.ms). Set it alike on the function and the service: both write the same partitions."
  type        = number
  default     = 86400000
}

variable "jwt_issuer" {
  description = "OIDC issuer whose JWTs the function verifies when invoked without API Gateway's authorizer; null: minted tokens only."
  type        = string
  default     = null
}

variable "jwt_audience" {
  description = "Expected aud (or Cognito client_id) of those JWTs; null: not checked."
  type        = string
  default     = null
}
