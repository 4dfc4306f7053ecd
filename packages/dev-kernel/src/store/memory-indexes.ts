/** Small sorted-array and multimap index helpers of the memory store. */

/** Insert `id` into the ascending array `ids`; ids are usually generated in order, so check the end first. */
export function insertSorted(ids: string[], id: string): void {
  const n = ids.length;
  if (n === 0 || ids[n - 1]! < id) {
    ids.push(id);
    return;
  }
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ids[mid]! < id) lo = mid + 1;
    else hi = mid;
  }
  ids.splice(lo, 0, id);
}

export function removeSorted(ids: string[], id: string): void {
  const i = ids.indexOf(id);
  if (i >= 0) ids.splice(i, 1);
}

export function pushIndex(map: Map<string, string[]>, key: string, id: string): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [id]);
  else list.push(id);
}

export function removeIndex(map: Map<string, string[]>, key: string, id: string): void {
  const list = map.get(key);
  if (list === undefined) return;
  const i = list.indexOf(id);
  if (i >= 0) list.splice(i, 1);
  if (list.length === 0) map.delete(key);
}
