"""The local server's settings as the engine turns them into an environment (aicd.llm.engines)."""

from aicd.llm.engines import engine_for, settings

ENTRY = {"name": "m", "litellm_model": "openai/m", "serve": {"model": "package:smollm2-135m-instruct"}}


def vllm_env(**serve) -> dict:
    return engine_for(settings({**ENTRY, "serve": {**ENTRY["serve"], **serve}})).env()


def test_on_a_cpu_the_model_runs_in_the_engine_cores_process_unless_asked():
    # a worker process of its own made the engine core spin while it waited (BENCHMARKS.md)
    assert vllm_env()["VLLM_ENABLE_V1_MULTIPROCESSING"] == "0"
    assert "VLLM_ENABLE_V1_MULTIPROCESSING" not in vllm_env(worker_process=True)


def test_on_a_gpu_vllms_own_layout_stays():
    env = vllm_env(device="cuda")
    assert "VLLM_ENABLE_V1_MULTIPROCESSING" not in env and "VLLM_CPU_KVCACHE_SPACE" not in env


def test_the_setting_is_part_of_the_cache_identity():
    from aicd.llm.engines import cache_identity

    spec = settings(ENTRY)
    assert cache_identity(spec) != cache_identity({**spec, "worker_process": True})


def test_which_served_models_answer_differently_with_another_batch():
    """float32 on a CPU (measured) and vLLM's batch-invariant kernels (the GPU layer) count as giving
    the same greedy answers whatever the batch; bfloat16 on a CPU (the bfloat16 demo's registry)
    does not, nor a GPU without those kernels (not measured here: not claimed); a model at its
    own endpoint is not ours to say. The registry files as shipped."""
    from pathlib import Path

    from aicd.generate.registry import load_registry
    from aicd.llm.engines import batch_dependent

    config = Path(__file__).resolve().parents[3] / "config"
    local = {f: load_registry(config / f)["SmolLM2-135M-Instruct"]
             for f in ("models_local.yaml", "models_local_bf16.yaml", "models_local_gpu.yaml")}
    assert [batch_dependent(e) for e in local.values()] == [False, True, False]
    assert not batch_dependent({**local["models_local_bf16.yaml"], "api_base": "http://127.0.0.1:8000/v1"})
    gpu = local["models_local_gpu.yaml"]
    assert batch_dependent({**gpu, "serve": {**gpu["serve"], "batch_invariant": False, "dtype": "float32"}})
