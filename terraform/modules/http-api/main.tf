locals {
  jwt = var.authorization_type == "JWT"
}

resource "aws_apigatewayv2_api" "this" {
  name          = var.name
  protocol_type = "HTTP"
  description   = "Tierlog HTTP API v1: produce to the ingest Lambda, everything else to the index-service"
  tags          = var.tags
}

resource "aws_cloudwatch_log_group" "access" {
  name              = "/aws/apigateway/${var.name}"
  retention_in_days = var.log_retention_days
  tags              = var.tags
}

resource "aws_apigatewayv2_stage" "this" {
  api_id      = aws_apigatewayv2_api.this.id
  name        = "$default"
  auto_deploy = true

  default_route_settings {
    throttling_burst_limit = var.throttling_burst_limit
    throttling_rate_limit  = var.throttling_rate_limit
  }

  access_log_settings {
    destination_arn = aws_cloudwatch_log_group.access.arn
    format = jsonencode({
      requestId          = "$context.requestId"
      routeKey           = "$context.routeKey"
      status             = "$context.status"
      integrationStatus  = "$context.integrationStatus"
      integrationLatency = "$context.integrationLatency"
      responseLength     = "$context.responseLength"
    })
  }

  tags = var.tags
}

resource "aws_apigatewayv2_authorizer" "jwt" {
  count = local.jwt ? 1 : 0

  api_id           = aws_apigatewayv2_api.this.id
  name             = "${var.name}-jwt"
  authorizer_type  = "JWT"
  identity_sources = ["$request.header.Authorization"]

  jwt_configuration {
    issuer   = var.jwt_issuer
    audience = var.jwt_audience
  }
}

# Produce: POST /v1/topics/{topic}/records -> the ingest Lambda (its alias).
resource "aws_apigatewayv2_integration" "ingest" {
  api_id                 = aws_apigatewayv2_api.this.id
  integration_type       = "AWS_PROXY"
  integration_uri        = var.lambda_alias_invoke_arn
  payload_format_version = "2.0"
  timeout_milliseconds   = 30000
}

resource "aws_apigatewayv2_route" "produce" {
  api_id             = aws_apigatewayv2_api.this.id
  route_key          = "POST /v1/topics/{topic}/records"
  target             = "integrations/${aws_apigatewayv2_integration.ingest.id}"
  authorization_type = var.authorization_type
  authorizer_id      = local.jwt ? aws_apigatewayv2_authorizer.jwt[0].id : null
}

resource "aws_lambda_permission" "this" {
  statement_id  = "AllowTierlogHttpApi"
  action        = "lambda:InvokeFunction"
  function_name = var.lambda_function_name
  qualifier     = var.lambda_alias_name
  principal     = "apigateway.amazonaws.com"
  source_arn    = "${aws_apigatewayv2_api.this.execution_arn}/*/*/v1/topics/*/records"
}

# Everything else -> the index-service, through a VPC link to its internal load balancer.
resource "aws_security_group" "vpc_link" {
  name        = "${var.name}-vpc-link"
  description = "API Gateway VPC link to the Tierlog index-service load balancer"
  vpc_id      = var.vpc_id
  tags        = merge(var.tags, { Name = "${var.name}-vpc-link" })
}

resource "aws_vpc_security_group_egress_rule" "vpc_link" {
  security_group_id            = aws_security_group.vpc_link.id
  description                  = "HTTP to the index-service load balancer"
  ip_protocol                  = "tcp"
  from_port                    = 80
  to_port                      = 80
  referenced_security_group_id = var.lb_security_group_id
}

resource "aws_apigatewayv2_vpc_link" "this" {
  name               = var.name
  subnet_ids         = var.subnet_ids
  security_group_ids = [aws_security_group.vpc_link.id]
  tags               = var.tags
}

resource "aws_apigatewayv2_integration" "index_service" {
  api_id               = aws_apigatewayv2_api.this.id
  integration_type     = "HTTP_PROXY"
  integration_method   = "ANY"
  integration_uri      = var.lb_listener_arn
  connection_type      = "VPC_LINK"
  connection_id        = aws_apigatewayv2_vpc_link.this.id
  timeout_milliseconds = 30000
}

resource "aws_apigatewayv2_route" "default" {
  api_id             = aws_apigatewayv2_api.this.id
  route_key          = "$default"
  target             = "integrations/${aws_apigatewayv2_integration.index_service.id}"
  authorization_type = var.authorization_type
  authorizer_id      = local.jwt ? aws_apigatewayv2_authorizer.jwt[0].id : null
}
