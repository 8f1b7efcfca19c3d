output "api_id" {
  description = "ID of the HTTP API."
  value       = aws_apigatewayv2_api.this.id
}

output "api_url" {
  description = "Base URL of the API ($default stage); append /v1/..."
  value       = aws_apigatewayv2_stage.this.invoke_url
}

output "stage_name" {
  description = "Name of the stage (for the ApiGateway metric dimension Stage)."
  value       = aws_apigatewayv2_stage.this.name
}

output "execution_arn" {
  description = "Execution ARN of the API (for IAM policies of callers when authorization_type = AWS_IAM)."
  value       = aws_apigatewayv2_api.this.execution_arn
}

output "vpc_link_security_group_id" {
  description = "Security group of the VPC link; the load balancer must accept it."
  value       = aws_security_group.vpc_link.id
}
