variable "name" {
  description = "Name of the cluster, service, load balancer and roles; also the `service` metric dimension."
  type        = string
}

variable "container_image" {
  description = "Image of the index-service (built from index-service/src/main/docker/Dockerfile.jvm and pushed to a registry)."
  type        = string
}

variable "otel_collector_image" {
  description = "Image of the AWS Distro for OpenTelemetry collector sidecar that exports /q/metrics to CloudWatch."
  type        = string
  default     = "public.ecr.aws/aws-observability/aws-otel-collector:v0.40.0"
}

variable "metrics_namespace" {
  description = "CloudWatch namespace of the metrics the collector exports."
  type        = string
  default     = "Tierlog"
}

variable "metrics_scrape_interval" {
  description = "How often the collector scrapes /q/metrics (a Prometheus duration)."
  type        = string
  default     = "60s"
}

variable "cpu" {
  description = "Task CPU units (1024 = 1 vCPU)."
  type        = number
  default     = 1024
}

variable "memory" {
  description = "Task memory in MiB."
  type        = number
  default     = 2048
}

variable "ephemeral_storage_gib" {
  description = "Task local disk in GiB (21-200), holding TIERLOG_INDEX_DIR: the RocksDB index and the cold-read cache."
  type        = number
  default     = 50

  validation {
    condition     = var.ephemeral_storage_gib >= 21 && var.ephemeral_storage_gib <= 200
    error_message = "Fargate ephemeral storage is 21 to 200 GiB."
  }
}

variable "desired_count" {
  description = "Number of tasks."
  type        = number
  default     = 1
}

variable "deployment_minimum_healthy_percent" {
  description = "Lower bound of running tasks during a deployment, in percent of desired_count."
  type        = number
  default     = 100
}

variable "deployment_maximum_percent" {
  description = "Upper bound of running tasks during a deployment, in percent of desired_count."
  type        = number
  default     = 200
}

variable "container_health_check_command" {
  description = "Container health check (ECS format). The default needs curl in the image; the load balancer checks /q/health/ready independently."
  type        = list(string)
  default     = ["CMD-SHELL", "curl -fsS http://localhost:8080/q/health/ready || exit 1"]
}

variable "vpc_id" {
  description = "VPC of the service."
  type        = string
}

variable "subnet_ids" {
  description = "Private subnets of the tasks and of the internal load balancer."
  type        = list(string)
}

variable "lb_ingress_security_group_ids" {
  description = "Security groups allowed to call the internal load balancer on port 80, by a static name (e.g. vpc_link)."
  type        = map(string)
  default     = {}
}

variable "efs_file_system_id" {
  description = "ID of the hot-volume file system."
  type        = string
}

variable "efs_file_system_arn" {
  description = "ARN of the hot-volume file system."
  type        = string
}

variable "efs_access_point_id" {
  description = "ID of the hot-volume access point the task mounts."
  type        = string
}

variable "efs_access_point_arn" {
  description = "ARN of the hot-volume access point (IAM condition)."
  type        = string
}

variable "data_dir" {
  description = "TIERLOG_DATA_DIR: where the hot volume is mounted in the container."
  type        = string
  default     = "/mnt/tierlog"
}

variable "index_dir" {
  description = "TIERLOG_INDEX_DIR: RocksDB and the cold-read cache, on the task's local disk. The image's user must be able to create it."
  type        = string
  default     = "/var/lib/tierlog/index"
}

variable "fsync" {
  description = "TIERLOG_FSYNC: always, interval or never."
  type        = string
  default     = "always"
}

variable "max_request_bytes" {
  description = "TIERLOG_MAX_REQUEST_BYTES for the service's own produce endpoint."
  type        = number
  default     = 8388608
}

variable "cold_bucket_name" {
  description = "TIERLOG_COLD_S3_BUCKET."
  type        = string
}

variable "cold_bucket_arn" {
  description = "ARN of the cold-tier bucket (scope of the task role's S3 permissions)."
  type        = string
}

variable "cold_prefix" {
  description = "TIERLOG_COLD_S3_PREFIX; the task role may touch only objects under it (the whole bucket when empty)."
  type        = string
  default     = "tierlog"
}

variable "cold_kms_key_arn" {
  description = "KMS key of the bucket when it uses SSE-KMS; null for SSE-S3."
  type        = string
  default     = null
}

variable "log_retention_days" {
  description = "Retention of the service and metrics log groups in days."
  type        = number
  default     = 30
}

variable "tags" {
  description = "Tags for every resource of the module."
  type        = map(string)
  default     = {}
}

variable "producer_id_expiration_ms" {
  description = "TIERLOG_PRODUCER_ID_EXPIRATION: how long an idempotent producer is remembered after its last request (Kafka's producer.id.expiration.ms). Set it alike on the function and the service: both write the same partitions."
  type        = number
  default     = 86400000
}

variable "shutdown_timeout_seconds" {
  description = "tierlog.shutdown.timeout: longest time from SIGTERM to exit; the container's stopTimeout is 10 s more (Fargate allows at most 120)."
  type        = number
  default     = 10

  validation {
    condition     = var.shutdown_timeout_seconds >= 1 && var.shutdown_timeout_seconds <= 110
    error_message = "shutdown_timeout_seconds must be between 1 and 110 (stopTimeout = it + 10 <= 120)."
  }
}

variable "jwt_issuer" {
  description = "OIDC issuer whose JWTs the service accepts (tierlog.auth.jwt.issuer), e.g. a Cognito user pool URL; null: minted tokens only."
  type        = string
  default     = null
}

variable "jwt_jwks_url" {
  description = "JWKS URL of that issuer; null: <issuer>/.well-known/jwks.json (Cognito's)."
  type        = string
  default     = null
}

variable "jwt_audience" {
  description = "Expected aud (or Cognito client_id) of the JWTs; null: not checked."
  type        = string
  default     = null
}

variable "secret_kms_key_arn" {
  description = "KMS key encrypting the bootstrap token secret; null: the account's aws/secretsmanager key."
  type        = string
  default     = null
}

variable "bootstrap_token_version" {
  description = "Version of the generated bootstrap token; raising it writes a new random token to the secret."
  type        = number
  default     = 1
}

variable "kafka_enabled" {
  description = "Open the Kafka wire-protocol listener (docs/kafka.md) on kafka_port, with a Network Load Balancer for bootstrap. false: TIERLOG_KAFKA_ENABLED=false, no Kafka port at all."
  type        = bool
  default     = false
}

variable "kafka_port" {
  description = "TIERLOG_KAFKA_PORT: the Kafka port of the tasks and of the load balancer's listener."
  type        = number
  default     = 9092

  validation {
    condition     = var.kafka_port == floor(var.kafka_port) && var.kafka_port >= 1 && var.kafka_port <= 65535 && var.kafka_port != 8080
    error_message = "kafka_port must be a TCP port (1-65535) other than 8080, the HTTP port."
  }
}

variable "kafka_client_cidr_blocks" {
  description = "IPv4 CIDRs allowed to connect to the Kafka port, on the load balancer and on the tasks (clients connect to each task after bootstrap). With kafka_enabled, this or kafka_client_security_group_ids must name someone."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for c in var.kafka_client_cidr_blocks : can(cidrnetmask(c)) && try(cidrsubnet(c, 0, 0) == c, false)])
    error_message = "kafka_client_cidr_blocks must be IPv4 network CIDRs such as 10.0.0.0/16 (no host bits set)."
  }
}

variable "kafka_client_security_group_ids" {
  description = "Security groups (of this VPC or a peered one) allowed to connect to the Kafka port, on the load balancer and on the tasks."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for id in var.kafka_client_security_group_ids : can(regex("^sg-[0-9a-f]+$", id))])
    error_message = "kafka_client_security_group_ids must be security group IDs (sg-...)."
  }
}

variable "kafka_tls_keystore_secret_arn" {
  description = "Secrets Manager secret whose value is the base64 of a PKCS12 keystore (certificate chain and private key), injected as TIERLOG_KAFKA_TLS_KEYSTORE_BASE64: the listener then speaks TLS only (SASL_SSL). Its certificate must name the bootstrap name and the tasks' private DNS names (README). null: no TLS."
  type        = string
  default     = null

  validation {
    condition     = var.kafka_tls_keystore_secret_arn == null || can(regex("^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[^:]+$", var.kafka_tls_keystore_secret_arn))
    error_message = "kafka_tls_keystore_secret_arn must be the full ARN of a Secrets Manager secret (arn:aws:secretsmanager:<region>:<account>:secret:<name>-XXXXXX), its whole value the keystore."
  }
}

variable "kafka_tls_keystore_password_secret_arn" {
  description = "Secrets Manager secret whose value is the keystore's password, injected as TIERLOG_KAFKA_TLS_KEYSTORE_PASSWORD. Set with kafka_tls_keystore_secret_arn."
  type        = string
  default     = null

  validation {
    condition     = var.kafka_tls_keystore_password_secret_arn == null || can(regex("^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[^:]+$", var.kafka_tls_keystore_password_secret_arn))
    error_message = "kafka_tls_keystore_password_secret_arn must be the full ARN of a Secrets Manager secret, its whole value the password."
  }

  # A validation, not a precondition: it must stop the plan before the execution role's policy reads the pair.
  validation {
    condition     = (var.kafka_tls_keystore_password_secret_arn == null) == (var.kafka_tls_keystore_secret_arn == null)
    error_message = "kafka_tls_keystore_secret_arn and kafka_tls_keystore_password_secret_arn are set together or not at all."
  }
}

variable "kafka_allow_plaintext" {
  description = "Allow kafka_enabled without a TLS keystore: SASL over plaintext inside the VPC, so tokens cross the network unencrypted. Test stacks only."
  type        = bool
  default     = false
}

variable "kafka_client_auth" {
  description = "TIERLOG_KAFKA_TLS_CLIENT_AUTH: whether the Kafka listener asks clients for a certificate signed by kafka_client_ca_pem (docs/kafka.md, \"Client certificates\"): none, requested (a client may present one) or required (the TLS handshake fails without one). Other than none it needs kafka_enabled, kafka_tls_keystore_secret_arn and kafka_client_ca_pem."
  type        = string
  default     = "none"

  validation {
    condition     = contains(["none", "requested", "required"], var.kafka_client_auth)
    error_message = "kafka_client_auth must be none, requested or required."
  }
}

variable "kafka_client_ca_pem" {
  description = "TIERLOG_KAFKA_TLS_CLIENT_CA_PEM: PEM text of the CA certificate(s) that sign client certificates (public data, passed as plain environment). Read at task start; changing it registers a new task definition and replaces the tasks. null: no CA (kafka_client_auth must be none)."
  type        = string
  default     = null

  validation {
    condition     = var.kafka_client_ca_pem == null || can(regex("-----BEGIN CERTIFICATE-----\\s*[A-Za-z0-9+/=\\s]+-----END CERTIFICATE-----", var.kafka_client_ca_pem))
    error_message = "kafka_client_ca_pem must be the PEM text of one or more CA certificates (-----BEGIN CERTIFICATE----- ... -----END CERTIFICATE-----), not a path, an ARN or a private key."
  }
}

variable "kafka_client_certificate_scopes" {
  description = "TIERLOG_KAFKA_TLS_CLIENT_SCOPES_JSON (jsonencoded): certificate subject (distinguished name, e.g. CN=orders-app,O=Acme) to its space-separated Tierlog scopes (e.g. \"produce:topic:orders* fetch:topic:orders*\"). A client whose verified certificate has a listed subject is the principal cert:<subject> with those scopes, without SASL (ADR 0055). Read at task start: a change takes effect when the service's tasks are replaced. Needs kafka_client_auth other than none."
  type        = map(string)
  default     = {}

  validation {
    condition     = alltrue([for subject, scopes in var.kafka_client_certificate_scopes : strcontains(subject, "=")])
    error_message = "kafka_client_certificate_scopes: each key must be a certificate subject as a distinguished name, such as CN=orders-app,O=Acme."
  }

  validation {
    condition     = alltrue([for subject, scopes in var.kafka_client_certificate_scopes : trimspace(scopes) != ""])
    error_message = "kafka_client_certificate_scopes: each subject needs its space-separated scopes, such as \"produce:topic:orders* fetch:topic:orders*\"; an empty value would grant nothing."
  }
}
