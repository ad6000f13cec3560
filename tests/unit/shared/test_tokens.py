from shared.tokens import count_tokens, encode_all, encoding


def test_cl100k_counts_tokens_offline() -> None:
    assert count_tokens("hello world") == 2
    assert count_tokens("") == 0


def test_encode_all_is_tiktoken_s_batch_for_any_number_of_texts() -> None:
    for texts in ([], ["Mag ik eten?"], ["knie", "heup <|endoftext|>", ""]):
        assert encode_all(texts) == encoding().encode_batch(texts, disallowed_special=())
