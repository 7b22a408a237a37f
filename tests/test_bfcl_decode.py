"""Reading model output as BFCL's generation step writes it into calls for the judge."""

from __future__ import annotations

import pytest

from otel_reliability.bfcl.decode import DecodeError, decode

DECODED = [
    pytest.param("[math.factorial(number=5)]", "python", [{"math.factorial": {"number": 5}}], id="python-call-list"),
    pytest.param("math.hypot(x=4, y=5)", "python", [{"math.hypot": {"x": 4, "y": 5}}], id="python-call-without-brackets"),
    pytest.param("[f(a=1), g(b='x')]", "python", [{"f": {"a": 1}}, {"g": {"b": "x"}}], id="python-two-calls"),
    pytest.param("[f(a=-3, b=[1, 2], c={'k': True}, d=(1, 2), e=None)]", "python",
                 [{"f": {"a": -3, "b": [1, 2], "c": {"k": True}, "d": (1, 2), "e": None}}], id="python-literals"),
    pytest.param("[f(a=2*5, b=1/4)]", "python", [{"f": {"a": 10, "b": 0.25}}], id="python-arithmetic-folded"),
    pytest.param("[f(a=os.getcwd(), b=x, c=g(y=1))]", "python", [{"f": {"a": "os.getcwd()", "b": "x", "c": {"g": {"y": 1}}}}],
                 id="python-names-and-calls-as-text"),
    pytest.param("[f(1, a=2)]", "python", [{"f": {"a": 2}}], id="python-positional-arguments-dropped"),
    pytest.param("```python\n[f(a=1)]\n```", "python", [{"f": {"a": 1}}], id="markdown-fence"),
    pytest.param([{"get_weather": '{"city": "Paris"}'}], "python", [{"get_weather": {"city": "Paris"}}], id="fc-json-string-arguments"),
    pytest.param([{"get_weather": {"city": "Paris"}}], "python", [{"get_weather": {"city": "Paris"}}], id="fc-object-arguments"),
    pytest.param('[{"name": "f", "arguments": {"x": 1}}]', "python", [{"f": {"x": 1}}], id="json-name-arguments"),
    pytest.param([{"type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}], "python", [{"f": {"x": 1}}],
                 id="openai-tool-call"),
    pytest.param("[]", "python", [], id="empty-json-list"),
    pytest.param('[Cache.put(key="answer", ttl=42L, tags=new ArrayList<>(Arrays.asList("a", "b")))]', "java",
                 [{"Cache.put": {"key": "answer", "ttl": "42L", "tags": 'new ArrayList<>(Arrays.asList("a", "b"))'}}],
                 id="java-values-as-source-text"),
    pytest.param('[f(m=new HashMap<String, Object>() {{ put("a", 1); }})]', "java",
                 [{"f": {"m": 'new HashMap<String, Object>() {{ put("a", 1); }}'}}], id="java-generic-comma-kept"),
    pytest.param("[f(a=1), g(b=2)]", "java", [{"f": {"a": "1"}}], id="java-first-call-only"),
    pytest.param("[fetch(url='https://x.io', config={method: 'GET', n: 2}, ids=[1, 2])]", "javascript",
                 [{"fetch": {"url": "https://x.io", "config": "{method: 'GET', n: 2}", "ids": "[1, 2]"}}], id="javascript-source-text"),
]


@pytest.mark.parametrize("raw, language, calls", DECODED)
def test_decode_reads_each_output_shape(raw, language, calls):
    assert decode(raw, language) == calls


@pytest.mark.parametrize(
    "raw, language",
    [
        ("I cannot help with that.", "python"),
        ("[f(a=1", "python"),
        ("[1, 2]", "python"),
        ("", "python"),
        ([{"f": "{not json"}], "python"),
        (42, "python"),
        ("[f(a=(1, 2]", "java"),
        ("sorry", "javascript"),
    ],
)
def test_decode_rejects_what_is_not_function_calls(raw, language):
    with pytest.raises(DecodeError):
        decode(raw, language)
