"""The LLM layer shared by generation and judging: a litellm client with retries, rate
limits and a persistent request cache owned by the project."""
