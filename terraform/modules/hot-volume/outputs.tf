output "file_system_id" {
  description = "ID of the EFS file system."
  value       = aws_efs_file_system.this.id
}

output "file_system_arn" {
  description = "ARN of the EFS file system."
  value       = aws_efs_file_system.this.arn
}

output "access_point_id" {
  description = "ID of the access point (used by the Fargate task)."
  value       = aws_efs_access_point.this.id
}

output "access_point_arn" {
  description = "ARN of the access point (used by the Lambda). Available only once every mount target exists, as Lambda requires."
  value       = aws_efs_access_point.this.arn
  depends_on  = [aws_efs_mount_target.this]
}

output "security_group_id" {
  description = "ID of the file system's security group."
  value       = aws_security_group.this.id
}
