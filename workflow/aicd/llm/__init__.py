"""The LLM layer shared by generation and judging: a litellm client with retries, rate
limits and a persistent request cache owned by the project.

- client: bounded concurrency, rpm/tpm limits, retries with backoff, per-request provenance;
- cache: the persistent request cache (SQLite);
- prompts: versioned prompt templates (config/prompts/*.vN.yaml);
- endpoint: whether a model can be reached from the machine running the job;
- failures: a job's failed requests, a warning or, past a share, a user error;
- local_server: a local model served for one job on loopback;
- engines: the servers it can be served by (vLLM, transformers serve), their settings and needs;
- server_guard: the process that takes a server's whole tree down with its job."""
