"""A tiny LoCoMo-format sample shared by the LoCoMo tests."""

from __future__ import annotations

TINY = [
    {
        "sample_id": "tiny-1",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {
                    "speaker": "Ann",
                    "dia_id": "D1:1",
                    "text": "Hi Bob! I adopted a puppy named Biscuit last week.",
                },
                {
                    "speaker": "Bob",
                    "dia_id": "D1:2",
                    "text": "Congrats! My bicycle is painted bright red now.",
                    "blip_caption": "a photo of a red bicycle",
                    "img_url": ["x"],
                },
                {
                    "speaker": "Ann",
                    "dia_id": "D1:3",
                    "text": "Lovely. I start pottery classes on Tuesday.",
                },
            ],
            "session_2_date_time": "10:00 am on 20 June, 2023",
            "session_2": [
                {
                    "speaker": "Bob",
                    "dia_id": "D2:1",
                    "text": "I ran the Lisbon marathon in four hours.",
                },
                {
                    "speaker": "Ann",
                    "dia_id": "D2:2",
                    "text": "Amazing! Biscuit chewed my pottery vase.",
                },
                {
                    "speaker": "Bob",
                    "dia_id": "D2:3",
                    "text": "Ha, puppies. Mine would be a parrot if anything.",
                },
            ],
            "session_3_date_time": "9:00 am on 1 July, 2023",
        },
        "qa": [
            {
                "question": "What is the name of Ann's puppy?",
                "answer": "Biscuit",
                "evidence": ["D1:1"],
                "category": 1,
            },
            {
                "question": "Which marathon did Bob run?",
                "answer": "Lisbon",
                "evidence": ["D2:1"],
                "category": 2,
            },
            {
                "question": "What colour is Bob's bicycle?",
                "answer": "red",
                "evidence": ["D:1:2; D2:9"],
                "category": 4,
            },
            {
                "question": "What did Bob's puppy chew?",
                "adversarial_answer": "vase",
                "evidence": ["D2:2"],
                "category": 5,
            },
            {"question": "Unanswerable?", "answer": "x", "evidence": ["D"], "category": 3},
        ],
    }
]
