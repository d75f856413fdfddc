// The breadth-first walk of another module's struct trees
// (ts/exchange/foreign-walk.ts) refuses a node reached twice. A node above
// every node met before cannot have been met (issue 14: a tree laid out in
// order, as this library's exports are, is checked without a set); any
// other is compared with the nodes before it, or looked up in a set of them
// in a large tree. These tests put the repeated node on each of those paths.
import { describe, expect, test } from '@jest/globals';
import { ArrowCDeviceError } from '../ts/abi/errors.js';
import { Walk } from '../ts/exchange/foreign-walk.js';

/** Walks the addresses as the children of the first, in this order; the index of the node refused, or -1. */
function refused(addresses: number[]): number {
  const w = new Walk('array', addresses[0]!);
  for (let c = 1; c < addresses.length; c++) w.add(addresses[c]!, 0, c - 1);
  for (let i = 0; i < addresses.length; i++) {
    try {
      w.visit(i);
    } catch (e) {
      expect(e).toBeInstanceOf(ArrowCDeviceError);
      expect((e as Error).message).toBe(`array${i === 0 ? '' : `.children[${i - 1}]`}: the node at ${addresses[i]} is reached twice (the tree is a DAG or has a cycle)`);
      return i;
    }
  }
  return -1;
}

const rising = (n: number, from = 1000) => Array.from({ length: n }, (_, i) => from + 80 * i);

describe('a walk refuses every node reached twice', () => {
  test('addresses in order: none refused, small or large', () => {
    expect(refused(rising(5))).toBe(-1);
    expect(refused(rising(300))).toBe(-1);
  });

  test('unique addresses out of order: none refused, small or large', () => {
    expect(refused(rising(5).reverse())).toBe(-1);
    expect(refused([...rising(20), ...rising(40, 100_000).reverse(), 50])).toBe(-1);
  });

  test('a small tree: the repeat of the highest node, of the root, of a node met out of order', () => {
    expect(refused([1000, 1080, 1080])).toBe(2);
    expect(refused([1000, 1080, 1160, 1000])).toBe(3);
    expect(refused([1000, 900, 1080, 900])).toBe(3);
  });

  test('a large tree: the repeat found after the set is made, of nodes met before it and after it', () => {
    const ordered = rising(30);
    // The set is made at the first node out of order (index 30); a repeat of an earlier one.
    expect(refused([...ordered, 500, ordered[3]!])).toBe(31);
    // A node above all others after the set was made is put in it: its repeat is found.
    expect(refused([...ordered, 500, 900_000, 900_000])).toBe(32);
    // A node out of order, then its repeat.
    expect(refused([...ordered, 500, 600, 500])).toBe(32);
    // In order past the small tree's bound, then the root again (a cycle).
    expect(refused([...rising(40), 1000])).toBe(40);
  });
});
