variable "name" {
  description = "Name prefix for the VPC and its parts."
  type        = string
}

variable "cidr_block" {
  description = "CIDR block of the VPC; subnets are /20s carved from it (private from index 0, public from index 8)."
  type        = string
  default     = "10.40.0.0/16"
}

variable "availability_zones" {
  description = "Availability zones, one private and one public subnet in each (2 to 8)."
  type        = list(string)

  validation {
    condition     = length(var.availability_zones) >= 2 && length(var.availability_zones) <= 8
    error_message = "Give between 2 and 8 availability zones."
  }
}

variable "create_nat_gateway" {
  description = "Create one NAT gateway so private subnets reach the internet (image pulls, CloudWatch). Disable only with VPC interface endpoints of your own."
  type        = bool
  default     = true
}

variable "tags" {
  description = "Tags for every resource of the module."
  type        = map(string)
  default     = {}
}
