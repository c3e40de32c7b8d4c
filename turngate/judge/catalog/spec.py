"""The spec's headings and their stable IDs: which scenario or Decision each catalog entry covers.

``SPEC_IDS`` maps every scenario heading of the spec (and every numbered
Decision of the design) to its ID. The spec's text ships with the package
(``spec_files/``, a verbatim copy of the spec folder ``../shared/spec/`` beside
the repository, which a test keeps identical), so the quotes of every check can
be verified wherever turngate is installed. ``spec_headings`` reads the headings from
the files, so a heading the table does not know is found, not silently missed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

SPEC_DIR: Final = Path(__file__).resolve().with_name("spec_files")
# Where the spec lives beside a checkout (the repository's sibling ``shared/``): the copy's source.
SHARED_SPEC_DIR: Final = Path(__file__).resolve().parents[4] / "shared" / "spec"

# (spec file prefix, heading) -> ID
SPEC_IDS: Final[dict[tuple[str, str], str]] = {
    ("000", "Decision 1: Interactive completion gate is dual-track"): "design/decision-1/dual-track-gate",
    (
        "000",
        "Decision 2: Auto completion gate is output-validity-first",
    ): "design/decision-2/auto-output-validity",
    ("000", "Decision 3: Done marker is control-only in all modes"): "design/decision-3/marker-control-only",
    ("000", "Decision 3.1: Done marker detection MUST be stream-format tolerant and unified"): (
        "design/decision-3.1/unified-detector"
    ),
    ("000", "Decision 4: ask_user is optional enrichment"): "design/decision-4/ask-user-optional-enrichment",
    ("000", "Decision 4.1: soft completion MUST exclude ask_user-signaled turns"): (
        "design/decision-4.1/soft-completion-ask-user"
    ),
    ("000", "Decision 5: Backend-owned pending baseline"): "design/decision-5/backend-pending-baseline",
    ("000", "Decision 6: max_attempt is an interactive-only stop condition"): (
        "design/decision-6/max-attempt-interactive-only"
    ),
    ("000", "Decision 7: Stable diagnostics for soft completion and attempt exhaustion"): (
        "design/decision-7/stable-diagnostics"
    ),
    ("000", "Decision 8: Marker presence does not bypass terminal output validity"): (
        "design/decision-8/marker-no-bypass"
    ),
    (
        "001",
        "interactive 回合未完成进入等待态",
    ): "interactive-run-lifecycle/pausable-lifecycle/incomplete-turn-enters-waiting",
    ("001", "非法 ask_user 不阻断等待态"): (
        "interactive-run-lifecycle/pausable-lifecycle/invalid-ask-user-does-not-block-waiting"
    ),
    (
        "001",
        "resumable waiting_user 释放槽位",
    ): "interactive-run-lifecycle/waiting-slot-policy/resumable-releases-slot",
    ("001", "resumable 恢复执行前重新申请槽位"): (
        "interactive-run-lifecycle/waiting-slot-policy/resumable-reacquires-slot-before-running"
    ),
    (
        "001",
        "sticky_process waiting_user 保持槽位",
    ): "interactive-run-lifecycle/waiting-slot-policy/sticky-keeps-slot",
    ("001", "sticky_process 超时失败"): "interactive-run-lifecycle/sticky-wait-timeout/sticky-timeout-fails",
    ("001", "记录 ask/reply 历史"): "interactive-run-lifecycle/interaction-history/ask-reply-recorded",
    ("001", "resumable + strict=true"): "interactive-run-lifecycle/strict-switch/resumable-strict-true",
    ("001", "sticky_process + strict=true"): "interactive-run-lifecycle/strict-switch/sticky-strict-true",
    ("001", "resumable + strict=false"): "interactive-run-lifecycle/strict-switch/resumable-strict-false",
    ("001", "sticky_process + strict=false"): "interactive-run-lifecycle/strict-switch/sticky-strict-false",
    ("001", "auto 模式成功判定"): "interactive-run-lifecycle/completion-gate-by-mode/auto-success",
    (
        "001",
        "interactive 模式成功判定",
    ): "interactive-run-lifecycle/completion-gate-by-mode/interactive-success",
    ("001", "interactive 模式 marker 命中但输出校验失败"): (
        "interactive-run-lifecycle/completion-gate-by-mode/interactive-marker-invalid-output"
    ),
    (
        "001",
        "interactive 模式软条件成功判定",
    ): "interactive-run-lifecycle/completion-gate-by-mode/interactive-soft-success",
    ("001", "超过最大回合数触发失败"): "interactive-run-lifecycle/max-attempt/exceeded-fails",
    (
        "001",
        "未声明 max_attempt 允许无限回合",
    ): "interactive-run-lifecycle/max-attempt/unbounded-without-max-attempt",
    (
        "003",
        "ask_user 仅作为可选增强信息",
    ): "interactive-engine-turn-protocol/unified-turn-protocol/ask-user-optional-enrichment",
    ("003", "ask_user 可选增强优先使用非 JSON 结构"): (
        "interactive-engine-turn-protocol/unified-turn-protocol/prefer-non-json-structure"
    ),
    ("003", "ask_user 载荷不完整"): "interactive-engine-turn-protocol/ask-user-validation/incomplete-payload",
    ("003", "interactive 模式补丁"): "interactive-engine-turn-protocol/runtime-patch-mode/interactive-patch",
    ("003", "Gemini auto 模式命令"): "interactive-engine-turn-protocol/adapter-cli-command/gemini-auto",
    (
        "003",
        "Gemini interactive 模式命令",
    ): "interactive-engine-turn-protocol/adapter-cli-command/gemini-interactive",
    ("003", "iFlow auto 模式命令"): "interactive-engine-turn-protocol/adapter-cli-command/iflow-auto",
    (
        "003",
        "iFlow interactive 模式命令",
    ): "interactive-engine-turn-protocol/adapter-cli-command/iflow-interactive",
    ("003", "Codex auto 模式命令"): "interactive-engine-turn-protocol/adapter-cli-command/codex-auto",
    (
        "003",
        "Codex interactive 模式命令",
    ): "interactive-engine-turn-protocol/adapter-cli-command/codex-interactive",
    (
        "003",
        "interactive resume 回合命令",
    ): "interactive-engine-turn-protocol/adapter-cli-command/interactive-resume",
    ("003", "interactive 模式强条件判定完成"): (
        "interactive-engine-turn-protocol/completion-by-mode/interactive-strong-evidence"
    ),
    (
        "003",
        "done marker 检测兼容转义流文本",
    ): "interactive-engine-turn-protocol/completion-by-mode/escaped-marker-detection",
    (
        "003",
        "interactive 模式软条件判定完成",
    ): "interactive-engine-turn-protocol/completion-by-mode/interactive-soft-evidence",
    ("003", "interactive 模式缺失 done marker 进入等待态"): (
        "interactive-engine-turn-protocol/completion-by-mode/interactive-missing-marker-waits"
    ),
    (
        "003",
        "auto 模式不严格依赖 done marker",
    ): "interactive-engine-turn-protocol/completion-by-mode/auto-marker-optional",
    ("003", "done marker 在两种模式下均不参与业务校验"): (
        "interactive-engine-turn-protocol/completion-by-mode/marker-excluded-from-validation"
    ),
    ("003", "marker 已检测但输出无效必须失败"): (
        "interactive-engine-turn-protocol/completion-by-mode/marker-with-invalid-output-fails"
    ),
    ("003", "patch 顺序固定"): "interactive-engine-turn-protocol/skill-patch-order/patch-order-fixed",
    ("003", "mode 注入互斥"): "interactive-engine-turn-protocol/skill-patch-order/mode-exclusive",
    ("004", "kind 缺失或非预期值"): "interactive-decision-policy/question-kind/kind-missing-or-unexpected",
    ("004", "提问载荷包含核心字段"): "interactive-decision-policy/question-payload/core-fields",
    ("004", "各 kind 下均可提交自由文本"): "interactive-decision-policy/free-text-reply/any-kind-free-text",
    ("004", "interactive 模式不强制 ask_user 结构"): (
        "interactive-decision-policy/interactive-patch-ask-user-optional/no-forced-ask-user"
    ),
    ("004", "auto 模式保持自动执行语义"): "interactive-decision-policy/auto-patch/keeps-auto-semantics",
    (
        "004",
        "interaction 提供 default_decision_policy",
    ): "interactive-decision-policy/default-decision-policy/pending-has-policy",
    (
        "004",
        "strong evidence 优先完成",
    ): "interactive-decision-policy/evidence-priority/strong-evidence-completes",
    ("004", "soft evidence 可完成并告警"): (
        "interactive-decision-policy/evidence-priority/soft-evidence-completes-with-warning"
    ),
    (
        "004",
        "max_attempt 命中且无完成证据",
    ): "interactive-decision-policy/max-attempt-stop/exceeded-without-evidence",
}

_HEADING = re.compile(r"^(?:#### Scenario: |### (?=Decision ))(.+?)\s*$", re.MULTILINE)


def spec_headings(spec_dir: Path = SPEC_DIR) -> list[tuple[str, str]]:
    """(file prefix, heading) of every scenario and Decision, in file order."""
    headings = []
    for path in sorted(spec_dir.glob("0*.txt")):
        for heading in _HEADING.findall(path.read_text(encoding="utf-8")):
            headings.append((path.name[:3], heading))
    return headings
