"""LLM judges and response generation for h2htalk.

Providers (one module per SDK, each imported on first use), prompt templates rendered from the
study's rubric, structured-output parsing, the runner (concurrency, rate limits, retries,
resume), Anthropic Message Batches, the cost ledger and generation of companion responses.
Writes through ``data``; imports neither streamlit nor the analysis. The names below load on
first use (PEP 562), so ``judge.cli`` can be mounted on ``h2h`` without importing the runner.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = [
    "JudgeSpec", "MODES", "spec_from_row", "JudgeTemplate", "load_judge_template",
    "Filters", "JudgePlan", "plan_judging", "build_request",
    "run_judge", "dry_run", "DryRun", "RunOptions", "RunStats",
    "Parsed", "parse_answer",
    "PriceTable", "load_prices", "cost_summary", "export_judgments_csv",
    "submit_batches", "collect_batches", "CollectReport",
    "GenSpec", "CONDITIONS", "plan_generation", "run_generation", "load_generation_templates",
    "load_sap", "Scenario", "read_scenarios", "study_scenarios",
    "Provider", "ProviderError", "Reply", "Request", "make_provider",
]

# public name -> the module of this package that defines it
_WHERE = {
    "CollectReport": "batches", "collect_batches": "batches", "submit_batches": "batches",
    "MODES": "config", "JudgeSpec": "config", "spec_from_row": "config",
    "CONDITIONS": "generate", "GenSpec": "generate", "plan_generation": "generate",
    "run_generation": "generate",
    "Filters": "judging", "JudgePlan": "judging", "build_request": "judging",
    "plan_judging": "judging",
    "Parsed": "parse", "parse_answer": "parse",
    "PriceTable": "prices", "load_prices": "prices",
    "JudgeTemplate": "prompts", "load_generation_templates": "prompts",
    "load_judge_template": "prompts", "load_sap": "prompts",
    "Provider": "providers", "ProviderError": "providers", "Reply": "providers",
    "Request": "providers", "make_provider": "providers",
    "cost_summary": "reports", "export_judgments_csv": "reports",
    "DryRun": "estimate", "dry_run": "run", "run_judge": "run",
    "RunOptions": "calls", "RunStats": "calls",
    "Scenario": "scenarios", "read_scenarios": "scenarios", "study_scenarios": "scenarios",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'judge' has no attribute '{name}'")
    value = getattr(import_module(f".{where}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
