// Package aws is the Amazon EC2 provider: pools become aws_instance
// resources of the hashicorp/aws plugin, adopted instances are imported by
// instance id (i-...), and credentials come from AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and AWS_REGION (or AWS_PROFILE) or
// infrastructure.api.
//
// It calls no API itself and creates no network: instances go into the
// account's default VPC.
package aws
