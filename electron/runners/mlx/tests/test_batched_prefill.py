"""batched_prefill.py on real MLX arrays: a row split off a stacked cache is a view that
keeps every row alive, and `detach` gives it arrays of its own (what the prompt cache
stores when a stacked prompt ends its prefill)."""
import gc
import unittest

from exobar_mlx.batched_prefill import detach, stack, unstack

from .real_mlx import require_real_mlx

ROWS = 8


class DetachTest(unittest.TestCase):
    def setUp(self):
        require_real_mlx(self)
        import mlx.core as mx
        from mlx_lm.models.cache import ArraysCache, KVCache

        self.mx, self.KVCache, self.ArraysCache = mx, KVCache, ArraysCache

    def kv_rows(self):
        rows = []
        for i in range(ROWS):
            cache = self.KVCache()
            cache.update_and_fetch(self.mx.full((1, 4, 300, 64), float(i)), self.mx.full((1, 4, 300, 64), -float(i)))
            rows.append(cache)
        return rows

    def arrays_rows(self):
        rows = []
        for i in range(ROWS):
            cache = self.ArraysCache(2)
            cache.cache = [self.mx.full((1, 3, 4096), float(i)), self.mx.full((1, 16, 1024), float(i))]
            rows.append(cache)
        return rows

    def memory_kept_by(self, make_rows, keep):
        """Active MLX memory while only `keep(row 3 of a stacked cache)` is referenced."""
        mx = self.mx
        merged = stack(make_rows(), mx)
        mx.eval([a for a in (getattr(merged, "keys", None), getattr(merged, "values", None)) if a is not None]
                + [a for a in getattr(merged, "cache", []) or [] if a is not None])
        kept = keep(unstack(merged, 3))
        arrays = [a for a in (getattr(kept, "keys", None), getattr(kept, "values", None)) if a is not None] + [
            a for a in getattr(kept, "cache", []) or [] if a is not None]
        mx.eval(arrays)
        del merged
        gc.collect()
        return mx.get_active_memory(), sum(a.nbytes for a in arrays), kept

    def test_a_detached_row_holds_only_its_own_bytes_and_the_same_values(self):
        mx = self.mx
        for name, make_rows in (("KVCache", self.kv_rows), ("ArraysCache", self.arrays_rows)):
            with self.subTest(cache=name):
                gc.collect()
                base = mx.get_active_memory()
                viewed, row_bytes, view = self.memory_kept_by(make_rows, lambda row: row)
                # The control: a view keeps the whole stack (every row) alive.
                self.assertGreater(viewed - base, 4 * row_bytes)
                del view
                gc.collect()
                detached, row_bytes, own = self.memory_kept_by(make_rows, lambda row: detach(row, mx))
                self.assertLess(detached - base, 1.5 * row_bytes)
                if name == "KVCache":
                    self.assertEqual((own.offset, own.keys.shape), (300, (1, 4, 300, 64)))
                    self.assertTrue(mx.array_equal(own.keys, mx.full((1, 4, 300, 64), 3.0)).item())
                    self.assertTrue(mx.array_equal(own.values, mx.full((1, 4, 300, 64), -3.0)).item())
                else:
                    self.assertTrue(mx.array_equal(own.cache[1], mx.full((1, 16, 1024), 3.0)).item())
                del own
                gc.collect()


if __name__ == "__main__":
    unittest.main()
