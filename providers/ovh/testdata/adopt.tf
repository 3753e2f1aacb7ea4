terraform {
  required_providers {
    ovh = {
      source  = "ovh/ovh"
      version = ">= 2.11.0"
    }
  }
}

provider "ovh" {
}

data "ovh_me" "account" {
}

data "ovh_dedicated_server" "prod_control_001" {
  service_name = "ns1234567.ip-1-2-3.net"
}

data "ovh_dedicated_server_specifications_hardware" "prod_control_001" {
  service_name = "ns1234567.ip-1-2-3.net"
}

data "ovh_dedicated_server" "prod_control_002" {
  service_name = ovh_dedicated_server.prod_control_002.service_name
}

data "ovh_dedicated_server_specifications_hardware" "prod_control_002" {
  service_name = ovh_dedicated_server.prod_control_002.service_name
}

import {
  to = ovh_dedicated_server.prod_control_001
  id = "ns1234567.ip-1-2-3.net"
}

resource "ovh_dedicated_server" "prod_control_001" {
  display_name              = "prod-control-001"
  prevent_install_on_import = true
  service_name              = "ns1234567.ip-1-2-3.net"

  lifecycle {
    ignore_changes = [boot_id, boot_script, customizations, efi_bootloader_path, monitoring, no_intervention, os, ovh_subsidiary, plan, plan_option, prevent_install_on_import, properties, range, state, storage]
  }
}

resource "ovh_dedicated_server" "prod_control_002" {
  customizations = {
    hostname = "prod-control-002"
    ssh_key  = "ssh-ed25519 AAAA"
  }
  display_name   = "prod-control-002"
  os             = "debian12_64"
  ovh_subsidiary = data.ovh_me.account.ovh_subsidiary
  plan = [{
    configuration = [{
      label = "dedicated_datacenter"
      value = "bhs"
      }, {
      label = "dedicated_os"
      value = "none_64.en"
      }, {
      label = "region"
      value = "canada"
    }]
    duration     = "P1M"
    plan_code    = "24adv01"
    pricing_mode = "default"
  }]

  lifecycle {
    ignore_changes = [display_name]
  }
}

output "servers" {
  description = "The servers, by hostname."
  value = {
    prod-control-001 = {
      disks        = try([for i in range(data.ovh_dedicated_server_specifications_hardware.prod_control_001.disk_groups[0].number_of_disks) : lower(data.ovh_dedicated_server_specifications_hardware.prod_control_001.disk_groups[0].disk_type) == "nvme" ? "/dev/nvme${i}n1" : "/dev/sd${substr("abcdefghijklmnopqrstuvwxyz", i, 1)}"], null)
      display_name = ovh_dedicated_server.prod_control_001.display_name
      hostname     = "prod-control-001"
      mac          = try([for v in data.ovh_dedicated_server.prod_control_001.vnis : v.nics[0] if v.mode == "vrack" && v.enabled][0], null)
      machine      = "24adv01"
      pool         = "control"
      private_ip   = null
      public_ip    = ovh_dedicated_server.prod_control_001.ip
      public_mac   = try([for v in data.ovh_dedicated_server.prod_control_001.vnis : v.nics[0] if v.mode == "public" && v.enabled][0], null)
      region       = ovh_dedicated_server.prod_control_001.region
      server_id    = ovh_dedicated_server.prod_control_001.service_name
      zone         = ovh_dedicated_server.prod_control_001.datacenter
    }
    prod-control-002 = {
      disks        = try([for i in range(data.ovh_dedicated_server_specifications_hardware.prod_control_002.disk_groups[0].number_of_disks) : lower(data.ovh_dedicated_server_specifications_hardware.prod_control_002.disk_groups[0].disk_type) == "nvme" ? "/dev/nvme${i}n1" : "/dev/sd${substr("abcdefghijklmnopqrstuvwxyz", i, 1)}"], null)
      display_name = ovh_dedicated_server.prod_control_002.display_name
      hostname     = "prod-control-002"
      mac          = try([for v in data.ovh_dedicated_server.prod_control_002.vnis : v.nics[0] if v.mode == "vrack" && v.enabled][0], null)
      machine      = "24adv01"
      pool         = "control"
      private_ip   = null
      public_ip    = ovh_dedicated_server.prod_control_002.ip
      public_mac   = try([for v in data.ovh_dedicated_server.prod_control_002.vnis : v.nics[0] if v.mode == "public" && v.enabled][0], null)
      region       = ovh_dedicated_server.prod_control_002.region
      server_id    = ovh_dedicated_server.prod_control_002.service_name
      zone         = ovh_dedicated_server.prod_control_002.datacenter
    }
  }
}
