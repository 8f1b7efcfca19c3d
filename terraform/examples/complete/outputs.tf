output "api_url" {
  description = "Base URL of the Tierlog HTTP API."
  value       = module.http_api.api_url
}

output "bucket_name" {
  description = "Name of the cold-tier bucket."
  value       = module.cold_bucket.bucket_name
}

output "efs_id" {
  description = "ID of the hot-volume EFS file system."
  value       = module.hot_volume.file_system_id
}

output "function_name" {
  description = "Name of the ingest Lambda function."
  value       = module.ingest_function.function_name
}

output "index_service_cluster" {
  description = "ECS cluster of the index-service."
  value       = module.index_service.cluster_name
}

output "kafka_bootstrap_servers" {
  description = "Kafka bootstrap.servers (internal NLB DNS name and port); null unless kafka_enabled."
  value       = module.index_service.kafka_bootstrap_servers
}
