locals {
  # Fixed by the Maven build of ingest-function (see terraform/validate: checked against the sources).
  handler = "io.tierlog.ingest.function.ApiGatewayIngestHandler::handleRequest"
}

resource "aws_cloudwatch_log_group" "this" {
  name              = "/aws/lambda/${var.name}"
  retention_in_days = var.log_retention_days
  tags              = var.tags
}

resource "aws_security_group" "this" {
  name        = "${var.name}-lambda"
  description = "Tierlog ingest function: NFS to the hot volume only"
  vpc_id      = var.vpc_id
  tags        = merge(var.tags, { Name = "${var.name}-lambda" })
}

# The function talks to EFS and nothing else; it has no S3, internet or AWS API egress.
resource "aws_vpc_security_group_egress_rule" "nfs" {
  security_group_id = aws_security_group.this.id
  description       = "NFS to the hot volume"
  ip_protocol       = "tcp"
  from_port         = 2049
  to_port           = 2049
  cidr_ipv4         = var.vpc_cidr_block
}

data "aws_iam_policy_document" "assume" {
  statement {
    actions = ["sts:AssumeRole"]

    principals {
      type        = "Service"
      identifiers = ["lambda.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "this" {
  name               = "${var.name}-lambda"
  assume_role_policy = data.aws_iam_policy_document.assume.json
  tags               = var.tags
}

# Least privilege: no S3 at all (the function only appends to the hot volume), EFS only through the
# access point, logs only to its own group. The ENI actions of a VPC function have no resource-level
# permissions in IAM, hence "*" for them alone.
data "aws_iam_policy_document" "this" {
  statement {
    sid       = "Logs"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.this.arn}:*"]
  }

  statement {
    sid = "VpcNetworkInterfaces"
    actions = [
      "ec2:CreateNetworkInterface",
      "ec2:DescribeNetworkInterfaces",
      "ec2:DescribeSubnets",
      "ec2:DeleteNetworkInterface",
      "ec2:AssignPrivateIpAddresses",
      "ec2:UnassignPrivateIpAddresses",
    ]
    resources = ["*"]
  }

  statement {
    sid       = "HotVolumeThroughAccessPoint"
    actions   = ["elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite"]
    resources = [var.efs_file_system_arn]

    condition {
      test     = "StringEquals"
      variable = "elasticfilesystem:AccessPointArn"
      values   = [var.efs_access_point_arn]
    }
  }
}

resource "aws_iam_role_policy" "this" {
  name   = "tierlog-ingest"
  role   = aws_iam_role.this.id
  policy = data.aws_iam_policy_document.this.json
}

resource "aws_lambda_function" "this" {
  function_name    = var.name
  role             = aws_iam_role.this.arn
  runtime          = "java17"
  handler          = local.handler
  filename         = var.artifact_path
  source_code_hash = filebase64sha256(var.artifact_path)
  memory_size      = var.memory_size
  timeout          = var.timeout
  architectures    = ["x86_64"]
  publish          = true

  reserved_concurrent_executions = var.reserved_concurrent_executions

  environment {
    variables = merge({
      TIERLOG_DATA_DIR                  = var.mount_path
      TIERLOG_FSYNC                     = var.fsync
      TIERLOG_COLD_STORE                = "s3"
      TIERLOG_COLD_S3_BUCKET            = var.cold_bucket_name
      TIERLOG_COLD_S3_PREFIX            = var.cold_prefix
      TIERLOG_MAX_REQUEST_BYTES         = tostring(var.max_request_bytes)
      TIERLOG_PRODUCER_ID_EXPIRATION_MS = tostring(var.producer_id_expiration_ms)
      JAVA_TOOL_OPTIONS                 = var.java_tool_options
      # Behind API Gateway's JWT authorizer the verified claims decide; invoked directly, the function verifies
      # bearer tokens itself (minted tokens on the hot volume, or JWTs of jwt_issuer).
      TIERLOG_AUTH_MODE = "token"
      }, var.jwt_issuer == null ? {} : {
      TIERLOG_AUTH_JWT_ISSUER   = var.jwt_issuer
      TIERLOG_AUTH_JWT_JWKS_URL = "${trimsuffix(var.jwt_issuer, "/")}/.well-known/jwks.json"
      TIERLOG_AUTH_JWT_AUDIENCE = var.jwt_audience
    })
  }

  vpc_config {
    subnet_ids         = var.subnet_ids
    security_group_ids = [aws_security_group.this.id]
  }

  file_system_config {
    arn              = var.efs_access_point_arn
    local_mount_path = var.mount_path
  }

  logging_config {
    log_format = "JSON"
    log_group  = aws_cloudwatch_log_group.this.name
  }

  dynamic "snap_start" {
    for_each = var.snap_start ? [true] : []
    content {
      apply_on = "PublishedVersions"
    }
  }

  lifecycle {
    precondition {
      condition     = !var.snap_start
      error_message = "Lambda SnapStart cannot be combined with an EFS mount (AWS Lambda limitation), and this function's hot volume is EFS. Leave snap_start = false."
    }
  }

  tags = var.tags

  depends_on = [aws_iam_role_policy.this]
}

# API Gateway invokes this alias, which always points at the version just published.
resource "aws_lambda_alias" "this" {
  name             = var.alias_name
  function_name    = aws_lambda_function.this.function_name
  function_version = aws_lambda_function.this.version
}
