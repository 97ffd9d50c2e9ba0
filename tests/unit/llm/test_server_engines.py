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
