"""``deploy/grafana/otel-reliability.json`` is a dashboard Grafana can provision, built on
series that exist: every panel's query is one that ``test_prometheus_scrape.py`` runs
against a real Prometheus scraping real receivers (``DASHBOARD_QUERIES``), and its legend
names only labels that query returns. Screenshot-free: no Grafana runs here."""

from __future__ import annotations

import re
from itertools import combinations

import yaml

from .prometheus_harness import DASHBOARD, DASHBOARD_QUERIES, dashboard, panels

PROVISIONING = DASHBOARD.parent / "provisioning"


def test_the_dashboard_is_provisionable():
    board = dashboard()
    assert board.get("id") is None  # Grafana assigns ids; a provisioned file must not carry one
    assert board["uid"] and board["title"] and isinstance(board["schemaVersion"], int)
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert (variables["datasource"]["type"], variables["datasource"]["query"]) == ("datasource", "prometheus")
    provider = yaml.safe_load((PROVISIONING / "dashboards" / "otel-reliability.yaml").read_text(encoding="utf-8"))
    assert provider["apiVersion"] == 1 and provider["providers"][0]["type"] == "file"


def test_every_panel_queries_the_chosen_prometheus():
    for panel in panels(dashboard()):
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
        assert all(t["datasource"] == panel["datasource"] for t in panel["targets"]), panel["title"]


def test_every_panel_query_is_one_tested_against_a_real_prometheus():
    for panel in panels(dashboard()):
        assert panel["targets"], f"{panel['title']} has no query"
        for target in panel["targets"]:
            assert target["expr"] in DASHBOARD_QUERIES, f"{panel['title']}: {target['expr']} is not tested"


def test_every_legend_names_labels_its_query_returns():
    for panel in panels(dashboard()):
        for target in panel["targets"]:
            used = set(re.findall(r"\{\{\s*(\w+)\s*\}\}", target.get("legendFormat", "")))
            assert used and used <= DASHBOARD_QUERIES[target["expr"]], (panel["title"], used)


def test_panels_have_unique_ids_and_do_not_overlap():
    board = dashboard()
    everything = board["panels"]
    assert len({p["id"] for p in everything}) == len(everything)

    def cells(panel):
        g = panel["gridPos"]
        return {(x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])}

    for a, b in combinations(everything, 2):
        assert not cells(a) & cells(b), (a["title"], b["title"])
    assert all(p["gridPos"]["x"] + p["gridPos"]["w"] <= 24 for p in everything)
