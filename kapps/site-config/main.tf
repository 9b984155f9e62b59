# Site settings computed by Terraform. Only terraform_data resources and outputs: the built-in provider needs
# nothing downloaded, so this module works offline.

variable "site_name" {
  type        = string
  description = "Name of the site; the start of its title."
}

variable "environment" {
  type        = string
  description = "Where the site runs (the stack name)."
}

variable "owner" {
  type        = string
  default     = "nobody in particular"
  description = "Who looks after the site."
}

# The site's settings. Its id is a fresh UUID each time it is created: a visible trace of a real apply.
resource "terraform_data" "site" {
  input = {
    title = "${var.site_name} (${var.environment})"
    owner = var.owner
  }
}

output "title" {
  value       = terraform_data.site.output.title
  description = "The page title."
}

output "owner" {
  value       = terraform_data.site.output.owner
  description = "Who looks after the site."
}

output "build_id" {
  value       = terraform_data.site.id
  description = "Changes whenever the settings are created again."
}
