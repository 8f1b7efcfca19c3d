output "cluster_name" {
  description = "Name of the ECS cluster."
  value       = aws_ecs_cluster.this.name
}

output "service_name" {
  description = "Name of the ECS service."
  value       = aws_ecs_service.this.name
}

output "task_role_arn" {
  description = "ARN of the task role (S3, EFS, metrics)."
  value       = aws_iam_role.task.arn
}

output "task_security_group_id" {
  description = "Security group of the tasks (an EFS client)."
  value       = aws_security_group.task.id
}

output "lb_listener_arn" {
  description = "ARN of the internal load balancer's listener (the API Gateway VPC link target)."
  value       = aws_lb_listener.this.arn
}

output "lb_security_group_id" {
  description = "Security group of the internal load balancer."
  value       = aws_security_group.lb.id
}

output "log_group_name" {
  description = "Log group of the containers."
  value       = aws_cloudwatch_log_group.this.name
}

output "metrics_namespace" {
  description = "CloudWatch namespace the collector writes to."
  value       = var.metrics_namespace
}

output "metrics_service_dimension" {
  description = "Value of the `service` dimension on the exported metrics."
  value       = var.name
}

output "bootstrap_token_secret_arn" {
  description = "ARN of the Secrets Manager secret holding the bootstrap admin token (read it to mint scoped tokens)."
  value       = aws_secretsmanager_secret.bootstrap.arn
}

output "execution_role_arn" {
  description = "ARN of the task execution role, which reads the secrets at task start (grant it kms:Decrypt in the key policy of a customer managed key that encrypts the Kafka keystore secrets)."
  value       = aws_iam_role.execution.arn
}

output "kafka_bootstrap_servers" {
  description = "Kafka bootstrap.servers: <internal NLB DNS name>:<kafka_port>; null when kafka_enabled = false."
  value       = var.kafka_enabled ? "${aws_lb.kafka[0].dns_name}:${var.kafka_port}" : null
}

output "kafka_lb_dns_name" {
  description = "DNS name of the Kafka bootstrap Network Load Balancer (for a Route 53 alias record); null when kafka_enabled = false."
  value       = one(aws_lb.kafka[*].dns_name)
}

output "kafka_lb_zone_id" {
  description = "Route 53 hosted zone ID of the Kafka bootstrap Network Load Balancer (for an alias record); null when kafka_enabled = false."
  value       = one(aws_lb.kafka[*].zone_id)
}

output "kafka_lb_security_group_id" {
  description = "Security group of the Kafka bootstrap Network Load Balancer; null when kafka_enabled = false."
  value       = one(aws_security_group.kafka_lb[*].id)
}
