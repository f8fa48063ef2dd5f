2café2cafe2cafés2caf2caf
Bx