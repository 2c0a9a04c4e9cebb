"""LLM judges and response generation for h2htalk.

Providers (one module per SDK, each imported on first use), prompt templates rendered from the
study's rubric, structured-output parsing, the runner (concurrency, rate limits, retries,
resume), Anthropic Message Batches, the cost ledger and generation of companion responses.
Writes through ``data``; imports neither streamlit nor the analysis.
"""

from .batches import CollectReport, collect_batches, submit_batches
from .config import MODES, JudgeSpec, spec_from_row
from .generate import CONDITIONS, GenSpec, plan_generation, run_generation
from .judging import Filters, JudgePlan, build_request, plan_judging
from .parse import Parsed, parse_answer
from .prices import PriceTable, load_prices
from .prompts import JudgeTemplate, load_generation_templates, load_judge_template, load_sap
from .providers import Provider, ProviderError, Reply, Request, make_provider
from .reports import cost_summary, export_judgments_csv
from .run import DryRun, dry_run, run_judge
from .runner import RunOptions, RunStats
from .scenarios import Scenario, read_scenarios, study_scenarios

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
