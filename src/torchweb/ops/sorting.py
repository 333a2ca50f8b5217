"""Sorting: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode."""
