from shared.tokens import count_tokens


def test_cl100k_counts_tokens_offline() -> None:
    assert count_tokens("hello world") == 2
    assert count_tokens("") == 0
