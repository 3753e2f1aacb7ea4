terraform {
  backend "local" {
    path = "state/prod.tfstate"
  }
}
