terraform {
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 5.0"
    }
  }
}

provider "aws" {
  region = "eu-west-3"
}

resource "aws_instance" "edge_ingress_001" {
  ami               = "ami-0123456789abcdef0"
  availability_zone = "eu-west-3a"
  instance_type     = "t3.medium"
  key_name          = "ops"
  tags = {
    Name       = "edge-ingress-001"
    managed-by = "plasma-node"
    platform   = "edge"
    pool       = "ingress"
  }
}

resource "aws_instance" "edge_ingress_002" {
  ami               = "ami-0123456789abcdef0"
  availability_zone = "eu-west-3a"
  instance_type     = "t3.medium"
  key_name          = "ops"
  tags = {
    Name       = "edge-ingress-002"
    managed-by = "plasma-node"
    platform   = "edge"
    pool       = "ingress"
  }
}

output "servers" {
  description = "The servers, by hostname."
  value = {
    edge-ingress-001 = {
      display_name = try(aws_instance.edge_ingress_001.tags["Name"], null)
      hostname     = "edge-ingress-001"
      machine      = aws_instance.edge_ingress_001.instance_type
      pool         = "ingress"
      private_ip   = aws_instance.edge_ingress_001.private_ip
      public_ip    = aws_instance.edge_ingress_001.public_ip
      region       = "eu-west-3"
      server_id    = aws_instance.edge_ingress_001.id
      zone         = aws_instance.edge_ingress_001.availability_zone
    }
    edge-ingress-002 = {
      display_name = try(aws_instance.edge_ingress_002.tags["Name"], null)
      hostname     = "edge-ingress-002"
      machine      = aws_instance.edge_ingress_002.instance_type
      pool         = "ingress"
      private_ip   = aws_instance.edge_ingress_002.private_ip
      public_ip    = aws_instance.edge_ingress_002.public_ip
      region       = "eu-west-3"
      server_id    = aws_instance.edge_ingress_002.id
      zone         = aws_instance.edge_ingress_002.availability_zone
    }
  }
}
