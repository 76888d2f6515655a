"""Object model: quantities, selectors, durations, the autoscaling API, defaults, validation, conversion."""
