terraform {
  backend "s3" {
    bucket = "tfstate"
    endpoints = {
      s3 = "http://127.0.0.1:8333"
    }
    key                         = "plasma-node/lab/terraform.tfstate"
    region                      = "us-east-1"
    skip_credentials_validation = true
    skip_metadata_api_check     = true
    skip_region_validation      = true
    skip_requesting_account_id  = true
    use_lockfile                = true
    use_path_style              = true
  }
}
