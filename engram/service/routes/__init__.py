"""The /v1 routes, one module per area; each is a thin call into `Memory`."""
