data "aws_availability_zones" "available" {
  state = "available"
}

locals {
  azs = slice(data.aws_availability_zones.available.names, 0, 2)
}

module "network" {
  source = "../../modules/network"

  name               = var.name
  availability_zones = local.azs
}

module "cold_bucket" {
  source = "../../modules/cold-bucket"

  bucket_name   = var.bucket_name
  kms_key_arn   = var.kms_key_arn
  force_destroy = var.force_destroy
}

module "hot_volume" {
  source = "../../modules/hot-volume"

  name       = var.name
  vpc_id     = module.network.vpc_id
  subnet_ids = module.network.private_subnet_ids
  client_security_group_ids = {
    ingest        = module.ingest_function.security_group_id
    index_service = module.index_service.task_security_group_id
  }
  client_role_arns = [module.ingest_function.role_arn, module.index_service.task_role_arn]
}

module "ingest_function" {
  source = "../../modules/ingest-function"

  name = "${var.name}-ingest"
  # The shaded jar of `mvn -pl ingest-function -am package`.
  artifact_path                  = "${path.module}/../../../ingest-function/target/tierlog-ingest-function.jar"
  jwt_issuer                     = var.jwt_issuer
  jwt_audience                   = try(var.jwt_audience[0], null)
  memory_size                    = var.lambda_memory_size
  timeout                        = var.lambda_timeout
  reserved_concurrent_executions = var.lambda_reserved_concurrency
  vpc_id                         = module.network.vpc_id
  vpc_cidr_block                 = module.network.vpc_cidr_block
  subnet_ids                     = module.network.private_subnet_ids
  efs_file_system_arn            = module.hot_volume.file_system_arn
  efs_access_point_arn           = module.hot_volume.access_point_arn
  fsync                          = var.fsync
  cold_bucket_name               = module.cold_bucket.bucket_name
  cold_prefix                    = var.cold_prefix
}

module "index_service" {
  source = "../../modules/index-service"

  name                 = "${var.name}-index"
  container_image      = var.index_service_image
  otel_collector_image = var.otel_collector_image
  metrics_namespace    = var.metrics_namespace
  vpc_id               = module.network.vpc_id
  subnet_ids           = module.network.private_subnet_ids
  lb_ingress_security_group_ids = {
    vpc_link = module.http_api.vpc_link_security_group_id
  }
  efs_file_system_id   = module.hot_volume.file_system_id
  efs_file_system_arn  = module.hot_volume.file_system_arn
  efs_access_point_id  = module.hot_volume.access_point_id
  efs_access_point_arn = module.hot_volume.access_point_arn
  fsync                = var.fsync
  cold_bucket_name     = module.cold_bucket.bucket_name
  cold_bucket_arn      = module.cold_bucket.bucket_arn
  cold_prefix          = var.cold_prefix
  cold_kms_key_arn     = var.kms_key_arn
  jwt_issuer           = var.jwt_issuer
  jwt_audience         = try(var.jwt_audience[0], null)

  kafka_enabled                          = var.kafka_enabled
  kafka_port                             = var.kafka_port
  kafka_client_cidr_blocks               = var.kafka_client_cidr_blocks
  kafka_client_security_group_ids        = var.kafka_client_security_group_ids
  kafka_tls_keystore_secret_arn          = var.kafka_tls_keystore_secret_arn
  kafka_tls_keystore_password_secret_arn = var.kafka_tls_keystore_password_secret_arn
  kafka_allow_plaintext                  = var.kafka_allow_plaintext
  kafka_client_auth                      = var.kafka_client_auth
  kafka_client_ca_pem                    = var.kafka_client_ca_pem
  kafka_client_certificate_scopes        = var.kafka_client_certificate_scopes
}

module "http_api" {
  source = "../../modules/http-api"

  name                    = var.name
  lambda_function_name    = module.ingest_function.function_name
  lambda_alias_name       = module.ingest_function.alias_name
  lambda_alias_invoke_arn = module.ingest_function.alias_invoke_arn
  vpc_id                  = module.network.vpc_id
  subnet_ids              = module.network.private_subnet_ids
  lb_listener_arn         = module.index_service.lb_listener_arn
  lb_security_group_id    = module.index_service.lb_security_group_id
  authorization_type      = var.authorization_type
  jwt_issuer              = var.jwt_issuer
  jwt_audience            = var.jwt_audience
}

module "alarms" {
  source = "../../modules/alarms"

  name                   = var.name
  metrics_namespace      = module.index_service.metrics_namespace
  service_dimension      = module.index_service.metrics_service_dimension
  lambda_function_name   = module.ingest_function.function_name
  api_id                 = module.http_api.api_id
  api_stage              = module.http_api.stage_name
  consumer_lag_threshold = var.consumer_lag_threshold
  alarm_actions          = var.alarm_actions
}
