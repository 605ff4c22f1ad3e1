#!/usr/bin/python3
"""Writes a rigid-sphere head as an AES69 SOFA file (SimpleFreeFieldHRIR), a second head for
the tests that switch between HRTF sets: each ear's response is Brown & Duda's (1998) head
shadow (one pole, one zero, by the angle between the source and the ear) with Woodworth's
ray-model delay, for a sphere of RADIUS metres with its ears at +/-90 degrees.

Usage: make-sphere-sofa.py OUT.sofa [--radius-metres 0.11] [--distance-metres 1.5]
Needs Debian's python3-netcdf4 (scripts/deps test)."""
import argparse
import math

import netCDF4
import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("out")
parser.add_argument("--radius-metres", type=float, default=0.11)
parser.add_argument("--distance-metres", type=float, default=1.5)
parser.add_argument("--rate-hz", type=float, default=48000.0)
args = parser.parse_args()

rate, a, c = args.rate_hz, args.radius_metres, 343.0
taps, onset = 256, 24  # every response starts 24 samples in, the ray delay on top
directions = [(az, el) for el in range(-40, 91, 10) for az in range(0, 360, 10 if el < 90 else 360)]


def ear_response(incidence):
    """Head shadow and delay for a source `incidence` radians from the ear's axis."""
    n = 4 * taps
    f = np.fft.rfftfreq(n, 1 / rate)
    w = 2 * math.pi * f
    w0 = c / a
    alpha = 1.05 + 0.95 * math.cos(incidence * 180 / 150)
    shadow = (1 + 1j * alpha * w / (2 * w0)) / (1 + 1j * w / (2 * w0))
    # Woodworth: the path around the sphere to the ear, relative to the centre.
    if incidence < math.pi / 2:
        delay = -a / c * math.cos(incidence)
    else:
        delay = a / c * (incidence - math.pi / 2)
    samples = onset + delay * rate + a / c * rate
    spectrum = shadow * np.exp(-2j * math.pi * f * samples / rate)
    ir = np.fft.irfft(spectrum, n)[:taps]
    ir *= np.hanning(2 * taps)[taps:] ** 0.25  # a gentle taper to the end
    return ir


ir = np.zeros((len(directions), 2, taps))
positions = np.zeros((len(directions), 3))
for m, (az, el) in enumerate(directions):
    positions[m] = (az, el, args.distance_metres)
    # SOFA: azimuth counter-clockwise from ahead, +90 = left; the left ear's axis is +y.
    x = math.cos(math.radians(el)) * math.cos(math.radians(az))
    y = math.cos(math.radians(el)) * math.sin(math.radians(az))
    for r, ear_y in enumerate((1.0, -1.0)):
        incidence = math.acos(max(-1.0, min(1.0, y * ear_y)))
        ir[m, r] = ear_response(incidence)

out = netCDF4.Dataset(args.out, "w", format="NETCDF4")
for key, value in {
    "Conventions": "SOFA", "Version": "1.0", "SOFAConventions": "SimpleFreeFieldHRIR",
    "SOFAConventionsVersion": "1.0", "DataType": "FIR", "RoomType": "free field",
    "APIName": "scenesound make-sphere-sofa.py", "APIVersion": "1.0", "Title": "rigid sphere",
    "AuthorContact": "scenesound tests", "Organization": "SceneSound", "License": "Apache-2.0",
    "ListenerShortName": "sphere", "DatabaseName": "scenesound-tests", "ApplicationName": "scenesound",
    "ApplicationVersion": "1", "Comment": f"rigid sphere, radius {a} m", "History": "",
    "References": "Brown and Duda 1998", "Origin": "computed",
    "DateCreated": "2026-01-01 00:00:00", "DateModified": "2026-01-01 00:00:00",
}.items():
    out.setncattr(key, value)
for name, size in (("I", 1), ("C", 3), ("R", 2), ("E", 1), ("N", taps), ("M", len(directions))):
    out.createDimension(name, size)


def variable(name, dims, values, **attributes):
    v = out.createVariable(name, "f8", dims)
    v[:] = values
    for key, value in attributes.items():
        v.setncattr(key, value)


variable("ListenerPosition", ("I", "C"), [[0, 0, 0]], Type="cartesian", Units="metre")
variable("ListenerUp", ("I", "C"), [[0, 0, 1]])
variable("ListenerView", ("I", "C"), [[1, 0, 0]], Type="cartesian", Units="metre")
variable("ReceiverPosition", ("R", "C", "I"), [[[0], [a], [0]], [[0], [-a], [0]]], Type="cartesian", Units="metre")
variable("SourcePosition", ("M", "C"), positions, Type="spherical", Units="degree, degree, metre")
variable("EmitterPosition", ("E", "C", "I"), [[[0], [0], [0]]], Type="cartesian", Units="metre")
variable("Data.IR", ("M", "R", "N"), ir)
variable("Data.SamplingRate", ("I",), [rate], Units="hertz")
variable("Data.Delay", ("I", "R"), [[0, 0]])
out.close()
