output "function_name" {
  description = "Name of the Lambda function."
  value       = aws_lambda_function.this.function_name
}

output "function_arn" {
  description = "Unqualified ARN of the Lambda function."
  value       = aws_lambda_function.this.arn
}

output "version" {
  description = "Version published by the last apply."
  value       = aws_lambda_function.this.version
}

output "alias_name" {
  description = "Name of the alias API Gateway invokes."
  value       = aws_lambda_alias.this.name
}

output "alias_arn" {
  description = "ARN of the alias."
  value       = aws_lambda_alias.this.arn
}

output "alias_invoke_arn" {
  description = "Invoke ARN of the alias, for an API Gateway integration."
  value       = aws_lambda_alias.this.invoke_arn
}

output "role_arn" {
  description = "ARN of the function's execution role."
  value       = aws_iam_role.this.arn
}

output "security_group_id" {
  description = "Security group of the function's network interfaces."
  value       = aws_security_group.this.id
}

output "log_group_name" {
  description = "CloudWatch log group of the function."
  value       = aws_cloudwatch_log_group.this.name
}
