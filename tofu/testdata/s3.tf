terraform {
  backend "s3" {
    bucket = "state"
    endpoints = {
      s3 = "https://s3.example.com"
    }
    key                         = "plasma/prod.tfstate"
    region                      = "eu-west-1"
    skip_credentials_validation = true
    use_lockfile                = true
  }
}
