"""tensorflux automl: tables in, models, reports and endpoints out."""
