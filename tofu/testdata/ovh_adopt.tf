terraform {
  required_providers {
    ovh = {
      source  = "ovh/ovh"
      version = ">= 2.11.0"
    }
  }
}

import {
  to = ovh_dedicated_server.prod_control_existing_0
  id = "ns1234567.ip-192-0-2-1.net"
}

resource "ovh_dedicated_server" "prod_control_existing_0" {
  prevent_install_on_import = true
  service_name              = "ns1234567.ip-192-0-2-1.net"

  lifecycle {
    ignore_changes = all
  }
}
