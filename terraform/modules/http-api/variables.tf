variable "name" {
  description = "Name of the API and prefix of its parts."
  type        = string
}

variable "lambda_function_name" {
  description = "Name of the ingest function."
  type        = string
}

variable "lambda_alias_name" {
  description = "Alias of the ingest function that the API invokes."
  type        = string
}

variable "lambda_alias_invoke_arn" {
  description = "Invoke ARN of that alias."
  type        = string
}

variable "vpc_id" {
  description = "VPC of the VPC link."
  type        = string
}

variable "subnet_ids" {
  description = "Private subnets of the VPC link's network interfaces."
  type        = list(string)
}

variable "lb_listener_arn" {
  description = "Listener of the index-service's internal load balancer."
  type        = string
}

variable "lb_security_group_id" {
  description = "Security group of that load balancer (egress target of the VPC link)."
  type        = string
}

variable "authorization_type" {
  description = "Authorization of every route: JWT (the default; needs jwt_issuer and jwt_audience), AWS_IAM (SigV4-signed requests) or NONE (the services still check tokens)."
  type        = string
  default     = "JWT"

  validation {
    condition     = contains(["NONE", "AWS_IAM", "JWT"], var.authorization_type)
    error_message = "authorization_type must be NONE, AWS_IAM or JWT."
  }
}

variable "jwt_issuer" {
  description = "Issuer URL of the JWT authorizer (authorization_type = JWT)."
  type        = string
  default     = null
}

variable "jwt_audience" {
  description = "Accepted audiences of the JWT authorizer (authorization_type = JWT)."
  type        = list(string)
  default     = []
}

variable "throttling_burst_limit" {
  description = "Burst limit of the default route settings."
  type        = number
  default     = 1000
}

variable "throttling_rate_limit" {
  description = "Steady requests per second of the default route settings."
  type        = number
  default     = 500
}

variable "log_retention_days" {
  description = "Retention of the access log group in days."
  type        = number
  default     = 30
}

variable "tags" {
  description = "Tags for every resource of the module."
  type        = map(string)
  default     = {}
}
