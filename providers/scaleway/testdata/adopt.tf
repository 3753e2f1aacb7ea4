terraform {
  required_providers {
    scaleway = {
      source  = "scaleway/scaleway"
      version = "~> 2.0"
    }
  }
}

provider "scaleway" {
}

import {
  to = scaleway_baremetal_server.lab_worker_002
  id = "nl-ams-1/11111111-2222-3333-4444-555555555555"
}

resource "scaleway_baremetal_server" "lab_worker_001" {
  hostname    = "lab-worker-001"
  name        = "lab-worker-001"
  offer       = "EM-A115X-SSD"
  os          = "d17d6872-0412-45d9-a198-af82c34d3c5c"
  ssh_key_ids = ["4f1c2a4e-6f6d-4d8f-9e0b-2b1a3c4d5e6f"]
  tags        = ["platform:lab", "pool:worker", "managed-by:plasma-node"]
  zone        = "fr-par-2"
}

resource "scaleway_baremetal_server" "lab_worker_002" {
  hostname    = "lab-worker-002"
  name        = "lab-worker-002"
  offer       = "EM-A115X-SSD"
  os          = "d17d6872-0412-45d9-a198-af82c34d3c5c"
  ssh_key_ids = ["4f1c2a4e-6f6d-4d8f-9e0b-2b1a3c4d5e6f"]
  tags        = ["platform:lab", "pool:worker", "managed-by:plasma-node"]
  zone        = "nl-ams-1"

  lifecycle {
    ignore_changes = [hostname, install_config_afterward, offer, os, ssh_key_ids]
  }
}

output "servers" {
  description = "The servers, by hostname."
  value = {
    lab-worker-001 = {
      display_name = scaleway_baremetal_server.lab_worker_001.name
      hostname     = "lab-worker-001"
      machine      = "EM-A115X-SSD"
      pool         = "worker"
      private_ip   = null
      public_ip    = try(scaleway_baremetal_server.lab_worker_001.ipv4[0].address, null)
      region       = null
      server_id    = scaleway_baremetal_server.lab_worker_001.id
      zone         = scaleway_baremetal_server.lab_worker_001.zone
    }
    lab-worker-002 = {
      display_name = scaleway_baremetal_server.lab_worker_002.name
      hostname     = "lab-worker-002"
      machine      = "EM-A115X-SSD"
      pool         = "worker"
      private_ip   = null
      public_ip    = try(scaleway_baremetal_server.lab_worker_002.ipv4[0].address, null)
      region       = null
      server_id    = scaleway_baremetal_server.lab_worker_002.id
      zone         = scaleway_baremetal_server.lab_worker_002.zone
    }
  }
}
