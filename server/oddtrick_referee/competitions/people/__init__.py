"""A person's seat: at the terminal (`oddtrick play`) and in the browser (`play --web`, `web --play`)."""
