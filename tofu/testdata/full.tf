terraform {
  required_version = ">= 1.6.0"

  required_providers {
    hcloud = {
      source  = "hetznercloud/hcloud"
      version = "~> 1.60"
    }
    local = {
      source = "hashicorp/local"
    }
  }

  backend "pg" {
    schema_name = "plasma_prod"
  }
}

variable "hcloud_token" {
  description = "Hetzner Cloud API token"
  type        = string
  sensitive   = true
}

provider "hcloud" {
  endpoint      = "http://127.0.0.1:8080/v1"
  poll_interval = "50ms"
  token         = var.hcloud_token
}

data "hcloud_image" "debian" {
  name = "debian-12"
}

import {
  to = hcloud_server.prod_control_existing_0
  id = "4711"
}

import {
  to = hcloud_server.pool["prod-web-001"]
  id = "4712"
}

resource "hcloud_server" "prod_control_existing_0" {
  image = "debian-12"
  labels = {
    managed-by = "plasma-node"
    platform   = "prod"
    pool       = "control"
  }
  location    = "fsn1"
  name        = "prod-control-001"
  server_type = "cx22"

  lifecycle {
    ignore_changes = [ssh_keys, user_data, labels["note"]]
  }
}

resource "hcloud_server" "pool" {
  for_each    = toset(["prod-web-001", "prod-web-002"])
  backups     = false
  count_hint  = 3
  image       = data.hcloud_image.debian.name
  name        = each.key
  nothing     = null
  ratio       = 0.5
  server_type = "cx32"
  ssh_keys    = ["ops"]
  user_data   = "#cloud-config\nhostname: $${each.key}\n"

  public_net {
    ipv4_enabled = true
    ipv6_enabled = false
  }

  network {
    ip         = "10.0.0.5"
    network_id = 42
  }

  lifecycle {
    create_before_destroy = true
    prevent_destroy       = true
    ignore_changes        = all
  }
}

output "servers" {
  description = "Servers by name"
  value       = { for k, s in hcloud_server.pool : k => { id = s.id, ipv4 = s.ipv4_address } }
}

output "image" {
  value     = data.hcloud_image.debian.id
  sensitive = true
}
