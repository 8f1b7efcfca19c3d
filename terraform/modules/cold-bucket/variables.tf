variable "bucket_name" {
  description = "Name of the cold-tier bucket (globally unique)."
  type        = string
}

variable "kms_key_arn" {
  description = "ARN of a KMS key for SSE-KMS. Null (the default) encrypts with SSE-S3 (AES256)."
  type        = string
  default     = null
}

variable "abort_incomplete_multipart_upload_days" {
  description = "Days after which parts of an unfinished multipart upload are deleted."
  type        = number
  default     = 1

  validation {
    condition     = var.abort_incomplete_multipart_upload_days >= 1
    error_message = "abort_incomplete_multipart_upload_days must be at least 1."
  }
}

variable "force_destroy" {
  description = "Allow `terraform destroy` to delete a bucket that still holds segments. Keep false outside test stacks."
  type        = bool
  default     = false
}

variable "tags" {
  description = "Tags for every resource of the module."
  type        = map(string)
  default     = {}
}
