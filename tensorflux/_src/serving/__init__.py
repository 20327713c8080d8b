"""SavedModel export and loading (the server lives in tensorflux/serving/)."""
