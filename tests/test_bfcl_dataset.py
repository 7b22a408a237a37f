"""Reading ``bfcl-eval``'s dataset: from the installed package or from a path."""

from __future__ import annotations

import pytest

from otel_reliability.bfcl.dataset import CATEGORIES, DatasetError, category_of, data_dir, load_category

pytest.importorskip("bfcl_eval", reason="the dataset ships in bfcl-eval: pip install --no-deps bfcl-eval==2026.3.23")


@pytest.mark.parametrize(
    "entry_id, category",
    [("simple_python_3", "simple_python"), ("live_simple_0-0-0", "live_simple"), ("parallel_multiple_12", "parallel_multiple"),
     ("live_parallel_multiple_4-2-1", "live_parallel_multiple"), ("irrelevance_0", "irrelevance")],
)
def test_category_of_reads_the_category_from_an_id(entry_id, category):
    assert category_of(entry_id) == category


@pytest.mark.parametrize("category", CATEGORIES)
def test_every_supported_category_loads_with_its_possible_answers(category):
    entries = load_category(category)
    assert entries and all(e.category == category and category_of(e.id) == category for e in entries)
    assert all(e.prompt for e in entries)
    relevance = "relevance" in category
    assert all((e.possible_answer is None) is relevance for e in entries)


def test_parallel_does_not_pick_up_live_parallel():
    assert {category_of(e.id) for e in load_category("parallel")} == {"parallel"}


def test_a_path_may_name_the_data_the_package_or_its_parent():
    data = data_dir()
    for path in (data, data.parent, data.parent.parent):
        assert data_dir(path) == data
    assert load_category("simple_javascript", data.parent)[0].id == "simple_javascript_0"


def test_a_path_without_the_dataset_says_what_it_expected(tmp_path):
    with pytest.raises(DatasetError, match="no BFCL dataset here"):
        data_dir(tmp_path)


def test_unsupported_categories_are_named_with_the_supported_ones():
    with pytest.raises(DatasetError, match="unsupported category 'multi_turn_base'; supported: simple_python"):
        load_category("multi_turn_base")
