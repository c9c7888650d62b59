"""Targeted inputs for tests/device/fp8_mma_probe.cu: pairs of large products that cancel, with a tiny
product at every other k position and several exponent gaps, which show how the products are
grouped before alignment."""
import struct, random
random.seed(3)
recs=[]; meta=[]
def e5(exp, sign=0, mant=0): return (sign<<7)|((exp+15)<<2)|mant
def add(kind,a,b,c,m): recs.append(struct.pack('<II32s32s8x',kind,c,bytes(a),bytes(b))); meta.append(m)
for gap in (22,24,26,28,30):
  for ts in (0,1):
    for i in range(32):
      for j in range(i+1,32):
        for p in range(32):
          if p in (i,j): continue
          a=[0]*32;b=[0]*32
          a[i]=e5(7);b[i]=e5(7); a[j]=e5(7,1);b[j]=e5(7)
          h=14-gap; x=h//2; y=h-x
          a[p]=e5(x,ts);b[p]=e5(y)
          add(3,a,b,0,('g',gap,ts,i,j,p))
def e4(exp, sign=0, mant=0): return (sign<<7)|((exp+7)<<3)|mant
for kind,gap in ((0,28),(7,26)):
    for i in range(32):
      for j in range(i+1,32):
        for p in range(32):
          if p in (i,j): continue
          a=[0]*32;b=[0]*32
          if kind==0:
            a[i]=e4(8);b[i]=e4(8);a[j]=e4(8,1);b[j]=e4(8);a[p]=e4(-6);b[p]=e4(-6)
          else:
            a[i]=e5(7);b[i]=e5(7);a[j]=e5(7,1);b[j]=e5(7);a[p]=e5(-6);b[p]=e5(-6)
          add(kind,a,b,0,('h',kind,gap,i,j,p))
for kind in (3,0):
  enc=e5 if kind==3 else e4
  for (i,j,p) in ((0,1,2),(0,16,8),(0,31,20),(5,9,30),(3,19,11)):
    for gap in range(16,33):
      for ma in range(4 if kind==3 else 8):
        for mb in range(4 if kind==3 else 8):
          for ts in (0,1):
            for lm in range(2):
              a=[0]*32;b=[0]*32
              LE=7 if kind==3 else 4
              a[i]=enc(LE,0,lm);b[i]=enc(LE);a[j]=enc(LE,1,lm);b[j]=enc(LE)
              h=2*LE-gap; x=h//2; y=h-x
              lo=-14 if kind==3 else -6
              if x<lo or y<lo: continue
              a[p]=enc(x,ts,ma);b[p]=enc(y,0,mb)
              add(kind,a,b,0,('r',kind,i,j,p,gap,ma,mb,ts,lm))
for n in range(20000):
    kind=random.choice((3,0)); enc=e5 if kind==3 else e4; LE=7 if kind==3 else 4; lo=-14 if kind==3 else -6
    a=[0]*32;b=[0]*32
    i,j,p,q=random.sample(range(32),4)
    a[i]=enc(LE,0,random.randint(0,1));b[i]=enc(LE);a[j]=a[i]^0x80;b[j]=b[i]
    for z in (p,q):
        gap=random.randint(16,30); h=2*LE-gap; x=max(h//2,lo); y=max(h-x,lo)
        a[z]=enc(x,random.randint(0,1),random.randint(0,3));b[z]=enc(y,0,random.randint(0,3))
    add(kind,a,b,0,('q',kind,i,j,p,q))
# C interplay: one or two products with C, kinds 3 (f32) and 7 (f16)
for n in range(20000):
    kind=random.choice((3,7))
    a=[0]*32;b=[0]*32
    for p in random.sample(range(32),random.choice((1,1,2))):
        a[p]=e5(random.randint(-7,7),random.randint(0,1),random.randint(0,3)); b[p]=e5(random.randint(-7,7),0,random.randint(0,3))
    if kind==3: c=struct.unpack('<I',struct.pack('<f',random.choice([1,-1])*random.uniform(1,2)*2.0**random.randint(-14,14)))[0]
    else: c=struct.unpack('<H',struct.pack('<e',random.choice([1,-1])*random.uniform(1,2)*2.0**random.randint(-10,10)))[0]
    add(kind,a,b,c,('c',))
open('/work/main/build-matrix/probe/in.bin','wb').write(b''.join(recs))
import pickle; pickle.dump(meta,open('meta2.pkl','wb'))
print(len(recs))
