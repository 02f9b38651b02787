import unittest

from exobar_mlx.fast_synch import effective_fast_synch, parse_int_like_js, pin_for_mlx, reported_env

# (MLX_METAL_FAST_SYNCH, EXO_FAST_SYNCH, expected): the rule of effectiveFastSynch in
# shared/runner-protocol.ts, which the TypeScript side applies to the hello's env.
CASES = [
    (None, None, False),
    ("1", None, True),
    ("0", None, False),
    ("true", None, False),  # MLX parses an integer: "true" is 0
    ("2", None, True),
    ("-1", None, True),
    (" 1", None, True),
    ("1abc", None, True),
    ("abc", None, False),
    ("", None, False),
    ("0", "true", True),  # exo's bootstrap: EXO_FAST_SYNCH wins
    ("1", "false", False),
    (None, "1", True),
    (None, "0", True),  # anything but "false" turns it on
    ("1", "", True),  # an empty EXO_FAST_SYNCH counts as unset
    ("0", "", False),
]


class FastSynchTest(unittest.TestCase):
    def test_matches_the_typescript_rule(self):
        for mlx, exo, expected in CASES:
            env = {k: v for k, v in (("MLX_METAL_FAST_SYNCH", mlx), ("EXO_FAST_SYNCH", exo)) if v is not None}
            with self.subTest(mlx=mlx, exo=exo):
                self.assertIs(effective_fast_synch(env), expected)

    def test_parse_int_like_js(self):
        self.assertEqual(parse_int_like_js("12px"), 12)
        self.assertEqual(parse_int_like_js("+3"), 3)
        self.assertIsNone(parse_int_like_js("true"))
        self.assertEqual(parse_int_like_js("0x1"), 0)

    def test_pin_writes_exo_decision_through_before_mlx_reads_it(self):
        env = {"MLX_METAL_FAST_SYNCH": "1", "EXO_FAST_SYNCH": "false"}
        self.assertFalse(pin_for_mlx(env))
        self.assertEqual(env["MLX_METAL_FAST_SYNCH"], "0")
        env = {"EXO_FAST_SYNCH": "true"}
        self.assertTrue(pin_for_mlx(env))
        self.assertEqual(env["MLX_METAL_FAST_SYNCH"], "1")
        env = {"MLX_METAL_FAST_SYNCH": "true"}
        self.assertFalse(pin_for_mlx(env))
        self.assertEqual(env["MLX_METAL_FAST_SYNCH"], "true")  # MLX itself reads it as 0

    def test_reported_env_is_null_when_unset(self):
        self.assertEqual(reported_env({}), {"MLX_METAL_FAST_SYNCH": None, "EXO_FAST_SYNCH": None})


if __name__ == "__main__":
    unittest.main()
