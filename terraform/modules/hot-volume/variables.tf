variable "name" {
  description = "Name of the file system and prefix of its security group."
  type        = string
}

variable "vpc_id" {
  description = "VPC of the mount targets."
  type        = string
}

variable "subnet_ids" {
  description = "Private subnets, one mount target in each."
  type        = list(string)
}

variable "client_security_group_ids" {
  description = "Security groups allowed to reach NFS (2049), by a static name (e.g. ingest, index_service)."
  type        = map(string)
}

variable "client_role_arns" {
  description = "IAM roles allowed to mount and write through the access point (the Lambda and task roles)."
  type        = list(string)
}

variable "posix_uid" {
  description = "POSIX user id every access through the access point runs as, and owner of its root directory."
  type        = number
  default     = 1000
}

variable "posix_gid" {
  description = "POSIX group id every access through the access point runs as."
  type        = number
  default     = 1000
}

variable "root_directory" {
  description = "Directory of the file system exposed as the access point's root (created on first use)."
  type        = string
  default     = "/tierlog"
}

variable "performance_mode" {
  description = "EFS performance mode (generalPurpose or maxIO)."
  type        = string
  default     = "generalPurpose"
}

variable "throughput_mode" {
  description = "EFS throughput mode (elastic, bursting or provisioned)."
  type        = string
  default     = "elastic"
}

variable "kms_key_arn" {
  description = "KMS key for encryption at rest; null uses the AWS managed key for EFS."
  type        = string
  default     = null
}

variable "tags" {
  description = "Tags for every resource of the module."
  type        = map(string)
  default     = {}
}
